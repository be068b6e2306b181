/**
 * The tenants themselves (docs/tenants.md, "Who is who"), as the platform operator manages them: auth owns
 * the table (a tenant is who signs in where). Not a tenant's data, so no statement here names a tenant
 * scope. `db`'s `TenantsRepo.list()` stays the read-only list of scopes that sweeps in every layer walk.
 */
import type { Db, Unit } from '../db';

export type TenantStatus = 'active' | 'suspended';

/** What the operator sets on a tenant (every field optional on a change). */
export interface TenantFields {
  slug: string;
  name: string;
  hostnames: string[];
  status: TenantStatus;
  quotas: Record<string, number>;
  branding: Record<string, string>;
}

/** A tenant as the platform routes show it; JSON columns parsed. */
export interface TenantRecord extends TenantFields {
  id: number;
  created_at: string;
}

/** The tables of auth's own a deleted tenant's rows go from (other modules remove theirs first). */
const OWN_TABLES = [
  'tenant_logos',
  'sessions',
  'api_keys',
  'ssh_keys',
  'oidc_pending',
  'oidc_links',
  'mfa_totp',
  'mfa_recovery_codes',
  'mfa_passkeys',
  'mfa_challenges',
  'user_permissions',
  'user_groups',
  'groups',
  'users',
  'roles',
] as const;

type Stored = { id: number; slug: string; name: string; hostnames: string; status: TenantStatus; quotas: string; branding: string; created_at: string };

const recordOf = (r: Stored): TenantRecord => ({
  id: Number(r.id),
  slug: r.slug,
  name: r.name,
  hostnames: JSON.parse(r.hostnames) as string[],
  status: r.status,
  quotas: JSON.parse(r.quotas) as Record<string, number>,
  branding: JSON.parse(r.branding) as Record<string, string>,
  created_at: r.created_at,
});

export class TenantRecordsRepo {
  constructor(private db: Db) {}

  /** Every tenant, in id order (tenant 1 is always there: the migration seeds it). */
  async all(): Promise<TenantRecord[]> {
    const rows = await this.db.async.all(this.db.k.selectFrom('tenants').selectAll().where('deleted_at', 'is', null).orderBy('id'));
    return rows.map((r) => recordOf(r as Stored));
  }

  /** One tenant, or undefined. */
  async byId(id: number): Promise<TenantRecord | undefined> {
    const r = await this.db.async.first(this.db.k.selectFrom('tenants').selectAll().where('id', '=', id).where('deleted_at', 'is', null));
    return r ? recordOf(r as Stored) : undefined;
  }

  /** Adds an active tenant; undefined when its slug is taken. */
  async insert(t: Omit<TenantFields, 'status'>): Promise<number | undefined> {
    const k = this.db.k;
    const taken = k.selectFrom('tenants').select('id').where('slug', '=', t.slug);
    const insert = k
      .insertInto('tenants')
      .values({ ...stored(t), slug: t.slug, name: t.name, created_at: new Date().toISOString() })
      .returning('id');
    return this.db.async.unit(function* (tx): Unit<number | undefined> {
      if (yield* tx.first(taken)) return undefined;
      return Number((yield* tx.first(insert))!.id);
    });
  }

  /** Changes a tenant; false when it is gone or the new slug is another tenant's. */
  async update(id: number, patch: Partial<TenantFields>): Promise<boolean> {
    const k = this.db.k;
    const taken = patch.slug === undefined ? null : k.selectFrom('tenants').select('id').where('slug', '=', patch.slug).where('id', '<>', id);
    const set = {
      ...stored(patch),
      ...(patch.slug !== undefined && { slug: patch.slug }),
      ...(patch.name !== undefined && { name: patch.name }),
      ...(patch.status !== undefined && { status: patch.status }),
    };
    const exists = k.selectFrom('tenants').select('id').where('id', '=', id).where('deleted_at', 'is', null);
    const update = k.updateTable('tenants').set(set).where('id', '=', id).where('deleted_at', 'is', null);
    return this.db.async.unit(function* (tx): Unit<boolean> {
      if (taken && (yield* tx.first(taken))) return false;
      if (Object.keys(set).length === 0) return !!(yield* tx.first(exists));
      return (yield* tx.run(update)) > 0;
    });
  }

  /**
   * Deletes a tenant's people, groups, roles, sessions, keys and second factors in one unit, and leaves its
   * row as a tombstone (no slug, name or host names of its own): SQLite hands a deleted row's id to the next
   * insert, and a new tenant must never inherit the rows other modules still hold under the old id (its audit
   * log, notifications, ops). False when gone.
   */
  async remove(id: number): Promise<boolean> {
    const k = this.db.k;
    const rows = OWN_TABLES.map((table) => k.deleteFrom(table).where('tenant_id', '=', id));
    // `~` is no DNS label's: the tombstone's slug is never a live tenant's.
    const tenant = k
      .updateTable('tenants')
      .set({ deleted_at: new Date().toISOString(), slug: `~deleted-${id}`, name: '', hostnames: '[]', quotas: '{}', branding: '{}' })
      .where('id', '=', id)
      .where('deleted_at', 'is', null);
    return this.db.async.unit(function* (tx): Unit<boolean> {
      for (const q of rows) yield* tx.run(q);
      return (yield* tx.run(tenant)) > 0;
    });
  }

  /** The tombstones whose rows in other modules are not all removed yet (db's `TenantPurgeRepo`), in id order. */
  async unpurged(): Promise<number[]> {
    const q = this.db.k.selectFrom('tenants').select('id').where('deleted_at', 'is not', null).where('purged_at', 'is', null).orderBy('id');
    return (await this.db.async.all(q)).map((r) => Number(r.id));
  }

  /** Marks a tombstone purged: every module's rows of it are gone. Idempotent; a live tenant is never marked. */
  async markPurged(id: number): Promise<void> {
    await this.db.async.run(
      this.db.k
        .updateTable('tenants')
        .set({ purged_at: new Date().toISOString() })
        .where('id', '=', id)
        .where('deleted_at', 'is not', null)
        .where('purged_at', 'is', null),
    );
  }
}

/** The JSON columns of a change, as stored. */
function stored(t: Partial<TenantFields>): { hostnames?: string; quotas?: string; branding?: string } {
  return {
    ...(t.hostnames !== undefined && { hostnames: JSON.stringify(t.hostnames) }),
    ...(t.quotas !== undefined && { quotas: JSON.stringify(t.quotas) }),
    ...(t.branding !== undefined && { branding: JSON.stringify(t.branding) }),
  };
}
