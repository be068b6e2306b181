/**
 * `api_keys`: API keys, stored as a hash of their secret (the auth module owns
 * the table; `keys.ts` holds the rules and the cache of resolved keys). A
 * revoke is one unit whose conditional update says whether this call revoked
 * the key (audited once however many callers race).
 */
import type { Db, TenantScope } from '../db';
import type { ApiKeysTable } from '../db/tables';

export type KeyRow = Omit<ApiKeysTable, 'id'> & { id: number };
/** A key to store; its use and revocation come later. */
export type NewKey = Omit<KeyRow, 'id' | 'tenant_id' | 'last_used_at' | 'last_used_ip' | 'revoked_at'>;

export class KeysRepo {
  constructor(private db: Db) {}

  private byIdQuery(s: TenantScope, id: number) {
    return this.db.k.selectFrom('api_keys').selectAll().where('tenant_id', '=', s.tenant_id).where('id', '=', id);
  }

  /** Stores a key of the tenant; its id. */
  async insert(s: TenantScope, k: NewKey): Promise<number> {
    return Number(
      (await this.db.async.first(
        this.db.k
          .insertInto('api_keys')
          .values({ ...k, tenant_id: s.tenant_id })
          .returning('id'),
      ))!.id,
    );
  }

  /** The key, or undefined (every bearer-key request not cached reads it). */
  async byId(s: TenantScope, id: number): Promise<KeyRow | undefined> {
    return (await this.db.async.first(this.byIdQuery(s, id))) as KeyRow | undefined;
  }

  /**
   * The key among the keys of `tenants` (one statement: `tenant_id IN (…)`), or undefined. A key id is unique over
   * the installation, so a gateway that knows no tenant before the key finds it in its own.
   */
  async byIdAmong(tenants: readonly TenantScope[], id: number): Promise<KeyRow | undefined> {
    if (tenants.length === 1) return this.byId(tenants[0], id);
    if (!tenants.length) return undefined;
    const ids = tenants.map((t) => t.tenant_id);
    return (await this.db.async.first(this.db.k.selectFrom('api_keys').selectAll().where('tenant_id', 'in', ids).where('id', '=', id))) as KeyRow | undefined;
  }

  /** A person's keys (every key of the tenant when `userId` is null), newest first. */
  async list(s: TenantScope, userId: number | null): Promise<KeyRow[]> {
    let q = this.db.k.selectFrom('api_keys').selectAll().where('tenant_id', '=', s.tenant_id);
    if (userId !== null) q = q.where('user_id', '=', userId);
    return (await this.db.async.all(q.orderBy('id', 'desc'))) as KeyRow[];
  }

  /** A desktop key stored before keys had ids: by machine id and the hash of machine id and key. */
  async legacy(s: TenantScope, machineId: string, hash: string): Promise<KeyRow | undefined> {
    return (await this.db.async.first(
      this.db.k.selectFrom('api_keys').selectAll().where('tenant_id', '=', s.tenant_id).where('machine_id', '=', machineId).where('secret_hash', '=', hash),
    )) as KeyRow | undefined;
  }

  /** Revokes the key at `at` unless it is revoked already: the row after, and whether this call revoked it. */
  revoke(s: TenantScope, id: number, at: string): Promise<{ row: KeyRow | undefined; revoked: boolean }> {
    const update = this.db.k
      .updateTable('api_keys')
      .set({ revoked_at: at })
      .where('tenant_id', '=', s.tenant_id)
      .where('id', '=', id)
      .where('revoked_at', 'is', null);
    const read = this.byIdQuery(s, id);
    return this.db.async.unit(function* (t) {
      const revoked = (yield* t.run(update)) > 0;
      return { row: (yield* t.first(read)) as KeyRow | undefined, revoked };
    });
  }

  /** Records a use: when, and from where when `ip` is given (null: unknown). */
  async used(s: TenantScope, id: number, at: string, ip?: string | null): Promise<void> {
    await this.db.async.run(
      this.db.k
        .updateTable('api_keys')
        .set(ip === undefined ? { last_used_at: at } : { last_used_at: at, last_used_ip: ip })
        .where('tenant_id', '=', s.tenant_id)
        .where('id', '=', id),
    );
  }
}
