/**
 * Sign-ins started at the provider and not yet back (`oidc_pending`, owned by
 * auth). A row is found by the SHA-256 of its state, so the table holds no
 * usable state; it is taken (deleted) by the first callback that names it.
 */
import type { Db } from '../../db';
import type { OidcPendingTable } from '../../db/tables';
import { sha256Hex } from '../../lib/crypto';

/** How long a started sign-in may take at the provider. */
export const PENDING_TTL_MS = 10 * 60_000;
/** Unauthenticated starts cannot grow the table without bound. */
export const PENDING_MAX = 10_000;

/** A started sign-in as the callback needs it. */
export type PendingLogin = Omit<OidcPendingTable, 'state_hash'>;

export class PendingLogins {
  constructor(private db: Db) {}

  /**
   * Records a started sign-in. Sweeps expired rows first; false (nothing
   * stored) when `PENDING_MAX` live rows already wait.
   */
  add(state: string, p: Omit<PendingLogin, 'created_at'>, now = Date.now()): boolean {
    this.sweep(now);
    const live = this.db.first(this.db.k.selectFrom('oidc_pending').select((eb) => eb.fn.countAll<number>().as('n')))!.n;
    if (live >= PENDING_MAX) return false;
    this.db.run(this.db.k.insertInto('oidc_pending').values({ state_hash: sha256Hex(state), ...p, created_at: new Date(now).toISOString() }));
    return true;
  }

  /**
   * Removes the row of `state` and returns it; undefined when there is none or
   * it is older than `PENDING_TTL_MS` (removed all the same). One-time: a second
   * call for the same state finds nothing.
   */
  take(state: string, now = Date.now()): PendingLogin | undefined {
    const row = this.db.first(this.db.k.deleteFrom('oidc_pending').where('state_hash', '=', sha256Hex(state)).returningAll());
    if (!row || Date.parse(row.created_at) <= now - PENDING_TTL_MS) return undefined;
    const { state_hash: _, ...rest } = row;
    return rest;
  }

  /** Deletes rows older than `PENDING_TTL_MS`; returns how many. */
  sweep(now = Date.now()): number {
    return this.db.run(this.db.k.deleteFrom('oidc_pending').where('created_at', '<=', new Date(now - PENDING_TTL_MS).toISOString()));
  }
}
