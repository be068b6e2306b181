/**
 * `op_journal`: what each op has committed so far (the jobs module owns the
 * table; `journal.ts` gives an op its view). Single statements on `db.async`:
 * a put is one upsert, so a replayed step records its key once.
 */
import type { AsyncDb, Db } from '../db';

export class JournalRepo {
  private async: AsyncDb;

  constructor(private db: Db) {
    this.async = db.async;
  }

  /** The value recorded under `key` for the op, or undefined. */
  async get(opId: string, key: string): Promise<string | undefined> {
    return (await this.async.first(this.db.k.selectFrom('op_journal').select('value').where('op_id', '=', opId).where('key', '=', key)))?.value;
  }

  /** Records `key` for the op (idempotent; a later value replaces the earlier one). */
  async put(opId: string, key: string, value: string): Promise<void> {
    await this.async.run(
      this.db.k
        .insertInto('op_journal')
        .values({ op_id: opId, key, value })
        .onConflict((oc) => oc.columns(['op_id', 'key']).doUpdateSet((eb) => ({ value: eb.ref('excluded.value') }))),
    );
  }

  /** How many keys the op recorded. */
  async size(opId: string): Promise<number> {
    const r = await this.async.first(
      this.db.k
        .selectFrom('op_journal')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('op_id', '=', opId),
    );
    return Number(r!.n);
  }

  /** Forgets the op's journal. */
  async clear(opId: string): Promise<void> {
    await this.async.run(this.db.k.deleteFrom('op_journal').where('op_id', '=', opId));
  }
}
