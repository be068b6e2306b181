/**
 * An op's journal: what it has committed so far, kept across restarts. A
 * resumed attempt asks it what to skip (a copy skips the files it already
 * wrote and announced) instead of tripping over its own partial output.
 * Entries go with their op (ON DELETE CASCADE when ops are pruned) and are
 * cleared when the op finishes.
 */
import type { Db } from '../db';
import type { TenantScope } from '../db/tenant-tables';
import { JournalRepo } from './journal.repo';

export interface OpJournal {
  /** Whether `key` was recorded by this op (in any earlier attempt). */
  has(key: string): Promise<boolean>;
  /** The value recorded under `key`, or undefined. */
  get(key: string): Promise<string | undefined>;
  /** Records `key` (idempotent; a later value replaces the earlier one). */
  put(key: string, value?: string): Promise<void>;
  /** How many keys the op recorded. */
  size(): Promise<number>;
}

export class Journals {
  private repo: JournalRepo;

  constructor(db: Db) {
    this.repo = new JournalRepo(db);
  }

  /** The journal of one op, in the op's tenant. */
  of(s: TenantScope, opId: string): OpJournal {
    const { repo } = this;
    return {
      has: async (key) => (await repo.get(s, opId, key)) !== undefined,
      get: (key) => repo.get(s, opId, key),
      put: (key, value = '') => repo.put(s, opId, key, value),
      size: () => repo.size(s, opId),
    };
  }

  /** Forgets an op's journal (it finished). */
  clear(s: TenantScope, opId: string): Promise<void> {
    return this.repo.clear(s, opId);
  }
}
