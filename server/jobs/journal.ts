/**
 * An op's journal: what it has committed so far, kept across restarts. A
 * resumed attempt asks it what to skip (a copy skips the files it already
 * wrote and announced) instead of tripping over its own partial output.
 * Entries go with their op (ON DELETE CASCADE when ops are pruned) and are
 * cleared when the op finishes.
 */
import type { Db } from '../db';

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
  constructor(private db: Db) {}

  /** The journal of one op. */
  of(opId: string): OpJournal {
    const { db } = this;
    const entry = (key: string) => db.first(db.k.selectFrom('op_journal').select('value').where('op_id', '=', opId).where('key', '=', key));
    return {
      has: (key) => entry(key) !== undefined,
      get: (key) => entry(key)?.value,
      put: (key, value = '') =>
        void db.run(
          db.k
            .insertInto('op_journal')
            .values({ op_id: opId, key, value })
            .onConflict((oc) => oc.columns(['op_id', 'key']).doUpdateSet((eb) => ({ value: eb.ref('excluded.value') }))),
        ),
      size: () => Number(db.first(db.k.selectFrom('op_journal').select((eb) => eb.fn.countAll().as('n')).where('op_id', '=', opId))!.n),
    };
  }

  /** Forgets an op's journal (it finished). */
  clear(opId: string): void {
    this.db.run(this.db.k.deleteFrom('op_journal').where('op_id', '=', opId));
  }
}
