/**
 * An op's journal: what it has committed so far, kept across restarts. A
 * resumed attempt asks it what to skip (a copy skips the files it already
 * wrote and announced) instead of tripping over its own partial output.
 * Entries go with their op (ON DELETE CASCADE when ops are pruned) and are
 * cleared when the op finishes.
 */
import type { Sqlite } from '../db';

export interface OpJournal {
  /** Whether `key` was recorded by this op (in any earlier attempt). */
  has(key: string): boolean;
  /** The value recorded under `key`, or undefined. */
  get(key: string): string | undefined;
  /** Records `key` (idempotent; a later value replaces the earlier one). */
  put(key: string, value?: string): void;
  /** How many keys the op recorded. */
  size(): number;
}

export class Journals {
  private s;

  constructor(sqlite: Sqlite) {
    const q = (sql: string) => sqlite.prepare(sql);
    this.s = {
      get: q('SELECT value FROM op_journal WHERE op_id = ? AND key = ?'),
      put: q('INSERT INTO op_journal (op_id, key, value) VALUES (?, ?, ?) ON CONFLICT (op_id, key) DO UPDATE SET value = excluded.value'),
      count: q('SELECT count(*) AS n FROM op_journal WHERE op_id = ?'),
      clear: q('DELETE FROM op_journal WHERE op_id = ?'),
    };
  }

  /** The journal of one op. */
  of(opId: string): OpJournal {
    const s = this.s;
    return {
      has: (key) => s.get.get(opId, key) !== undefined,
      get: (key) => (s.get.get(opId, key) as { value: string } | undefined)?.value,
      put: (key, value = '') => void s.put.run(opId, key, value),
      size: () => (s.count.get(opId) as { n: number }).n,
    };
  }

  /** Forgets an op's journal (it finished). */
  clear(opId: string): void {
    this.s.clear.run(opId);
  }
}
