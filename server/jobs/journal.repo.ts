/**
 * `op_journal`: what each op has committed so far (the jobs module owns the
 * table; `journal.ts` gives an op its view). Single statements on `db.async`:
 * a put is one upsert, so a replayed step records its key once. A journal's rows carry their op's tenant
 * and are read and written only in it (docs/tenants.md).
 */
import type { AsyncDb, Db } from '../db';
import type { TenantScope } from '../db/tenant-tables';

export class JournalRepo {
  private async: AsyncDb;

  constructor(private db: Db) {
    this.async = db.async;
  }

  /** The value recorded under `key` for the op, or undefined. */
  async get(s: TenantScope, opId: string, key: string): Promise<string | undefined> {
    return (
      await this.async.first(
        this.db.k.selectFrom('op_journal').select('value').where('tenant_id', '=', s.tenant_id).where('op_id', '=', opId).where('key', '=', key),
      )
    )?.value;
  }

  /** Records `key` for the op (idempotent; a later value replaces the earlier one). */
  async put(s: TenantScope, opId: string, key: string, value: string): Promise<void> {
    await this.async.run(
      this.db.k
        .insertInto('op_journal')
        .values({ tenant_id: s.tenant_id, op_id: opId, key, value })
        .onConflict((oc) => oc.columns(['op_id', 'key']).doUpdateSet((eb) => ({ value: eb.ref('excluded.value') }))),
    );
  }

  /** How many keys the op recorded. */
  async size(s: TenantScope, opId: string): Promise<number> {
    const r = await this.async.first(
      this.db.k
        .selectFrom('op_journal')
        .where('tenant_id', '=', s.tenant_id)
        .select((eb) => eb.fn.countAll().as('n'))
        .where('op_id', '=', opId),
    );
    return Number(r!.n);
  }

  /** Forgets the op's journal. */
  async clear(s: TenantScope, opId: string): Promise<void> {
    await this.async.run(this.db.k.deleteFrom('op_journal').where('tenant_id', '=', s.tenant_id).where('op_id', '=', opId));
  }
}
