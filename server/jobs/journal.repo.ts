/**
 * `op_journal`: what each op has committed so far (the jobs module owns the
 * table; `journal.ts` gives an op its view). Synchronous for now: the copy,
 * move and archive workers read and write it between synchronous steps
 * (issue 30 continues).
 */
import type { Db } from '../db';

export class JournalRepo {
  constructor(private db: Db) {}

  /** The value recorded under `key` for the op, or undefined. */
  get(opId: string, key: string): string | undefined {
    return this.db.first(this.db.k.selectFrom('op_journal').select('value').where('op_id', '=', opId).where('key', '=', key))?.value;
  }

  /** Records `key` for the op (idempotent; a later value replaces the earlier one). */
  put(opId: string, key: string, value: string): void {
    this.db.run(
      this.db.k
        .insertInto('op_journal')
        .values({ op_id: opId, key, value })
        .onConflict((oc) => oc.columns(['op_id', 'key']).doUpdateSet((eb) => ({ value: eb.ref('excluded.value') }))),
    );
  }

  /** How many keys the op recorded. */
  size(opId: string): number {
    return Number(
      this.db.first(
        this.db.k
          .selectFrom('op_journal')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('op_id', '=', opId),
      )!.n,
    );
  }

  /** Forgets the op's journal. */
  clear(opId: string): void {
    this.db.run(this.db.k.deleteFrom('op_journal').where('op_id', '=', opId));
  }
}
