/**
 * Sign-ins started at the provider and not yet back (`oidc_pending`, owned by
 * auth). A row is found by the SHA-256 of its state, so the table holds no
 * usable state; it is taken (deleted) by the first callback that names it,
 * in the tenant it was started in (the row keeps it: the account is resolved there).
 */
import type { Db, TenantScope } from '../../db';
import type { OidcPendingTable } from '../../db/tables';
import { sha256Hex } from '../../lib/crypto';

/** How long a started sign-in may take at the provider. */
export const PENDING_TTL_MS = 10 * 60_000;
/** Unauthenticated starts cannot grow the table without bound. */
export const PENDING_MAX = 10_000;

/** A started sign-in as the callback needs it (with its tenant: the scope the account is resolved in). */
export type PendingLogin = Omit<OidcPendingTable, 'state_hash'>;

export class PendingLogins {
  /** `max`: the cap on waiting rows (a test lowers it). */
  constructor(
    private db: Db,
    private max = PENDING_MAX,
  ) {}

  /**
   * Records a started sign-in in the tenant. Sweeps its expired rows first;
   * false (nothing stored) when `max` live rows of the tenant already wait. One
   * serializable unit: two starts racing for the last place cannot both take it.
   */
  add(s: TenantScope, state: string, p: Omit<PendingLogin, 'created_at' | 'tenant_id'>, now = Date.now()): Promise<boolean> {
    const { k } = this.db;
    const { max } = this;
    const sweep = this.sweepQuery(s, now);
    const count = k
      .selectFrom('oidc_pending')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('tenant_id', '=', s.tenant_id);
    const insert = k.insertInto('oidc_pending').values({ state_hash: sha256Hex(state), ...p, tenant_id: s.tenant_id, created_at: new Date(now).toISOString() });
    return this.db.async.unit(
      function* (t) {
        yield* t.run(sweep);
        if (Number((yield* t.first(count))!.n) >= max) return false;
        yield* t.run(insert);
        return true;
      },
      { isolation: 'serializable' },
    );
  }

  /**
   * Removes the row of `state` and returns it; undefined when there is none or
   * it is older than `PENDING_TTL_MS` (removed all the same). One-time: a second
   * call for the same state finds nothing (one `DELETE … RETURNING`).
   */
  async take(s: TenantScope, state: string, now = Date.now()): Promise<PendingLogin | undefined> {
    const row = await this.db.async.first(
      this.db.k.deleteFrom('oidc_pending').where('tenant_id', '=', s.tenant_id).where('state_hash', '=', sha256Hex(state)).returningAll(),
    );
    if (!row || Date.parse(row.created_at) <= now - PENDING_TTL_MS) return undefined;
    const { state_hash: _, ...rest } = row;
    return rest;
  }

  /** Deletes the tenant's rows older than `PENDING_TTL_MS`; returns how many. */
  sweep(s: TenantScope, now = Date.now()): Promise<number> {
    return this.db.async.run(this.sweepQuery(s, now));
  }

  private sweepQuery(s: TenantScope, now: number) {
    return this.db.k
      .deleteFrom('oidc_pending')
      .where('tenant_id', '=', s.tenant_id)
      .where('created_at', '<=', new Date(now - PENDING_TTL_MS).toISOString());
  }
}
