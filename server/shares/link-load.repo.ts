/**
 * The link guard's shared counters (owner: shares; tables `link_streams`,
 * `link_visitors`, `link_strikes`), decided in the database so several instances enforce one
 * limit. A stream takes the lowest free numbered slot of its link (1..cap)
 * with one conditional upsert: the primary key (share_id, slot) makes the cap
 * exact however many instances race, and a slot whose lease passed (its
 * instance died) is free again. Short statements on `db.async` only. Every row carries its link's tenant
 * and every statement names it (docs/tenants.md): callers pass the share row as the scope.
 */
import type { Db, TenantScope } from '../db';

/** An admitted stream's slot (in its link's tenant). */
export interface Slot extends TenantScope {
  shareId: number;
  slot: number;
}

// Candidates: slot 1 and the slot after each live one; the lowest not live and within the cap is taken.
const LIVE = 'SELECT slot FROM link_streams WHERE tenant_id = @tenant AND share_id = @share AND until >= @now';
const TAKE = `INSERT INTO link_streams (tenant_id, share_id, slot, holder, until, ip)
         SELECT CAST(@tenant AS INTEGER), CAST(@share AS BIGINT), min(c.slot), CAST(@holder AS TEXT), CAST(@until AS BIGINT), CAST(@ip AS TEXT)
         FROM (SELECT 1 AS slot UNION ALL SELECT slot + 1 FROM link_streams WHERE tenant_id = @tenant AND share_id = @share AND until >= @now) c
         WHERE c.slot <= @cap AND c.slot NOT IN (${LIVE})
         HAVING min(c.slot) IS NOT NULL
         ON CONFLICT (share_id, slot) DO UPDATE SET holder = excluded.holder, until = excluded.until, ip = excluded.ip WHERE link_streams.until < @now
         RETURNING slot`;

export class LinkLoadRepo {
  constructor(private db: Db) {}

  /**
   * A free slot of `shareId` under `cap` for `holder` until `until` (ms), or null when every slot is live at
   * `now`; `ip` is the client's address. One unit, its few tries inside.
   */
  take(scope: TenantScope, shareId: number, cap: number, holder: string, until: number, now: number, ip: string | null = null): Promise<Slot | null> {
    const tenant = scope.tenant_id;
    return this.db.async.unit(function* (t) {
      // Two instances may pick the same free slot: the loser gets no row back and looks again while the count shows room.
      for (let tries = 0; tries < 5; tries++) {
        const [got] = yield* t.sql<{ slot: number }>(TAKE, { tenant, share: shareId, cap, holder, until, now, ip });
        if (got) return { tenant_id: tenant, shareId, slot: Number(got.slot) };
        const [{ n }] = yield* t.sql<{ n: number }>(
          'SELECT count(*) AS n FROM link_streams WHERE tenant_id = @tenant AND share_id = @share AND until >= @now',
          { tenant, share: shareId, now },
        );
        if (Number(n) >= cap) return null;
      }
      return null;
    });
  }

  /** Whether `ip` holds a live stream of `shareId` at `now` (on any instance). */
  async holds(scope: TenantScope, shareId: number, ip: string, now: number): Promise<boolean> {
    const q = 'SELECT 1 AS y FROM link_streams WHERE tenant_id = ? AND share_id = ? AND ip = ? AND until >= ? LIMIT 1';
    return (await this.db.async.sql(q, [scope.tenant_id, shareId, ip, now])).length > 0;
  }

  /**
   * Records an accelerator strike of `ip` on `shareId` at `now`; returns its strikes since `since` (ms).
   * Serializable (as `see`): of strikes recorded at once, the last to commit counts them all, so a threshold
   * crossed by a burst is seen by one of its callers.
   */
  strike(scope: TenantScope, shareId: number, ip: string, now: number, since: number): Promise<number> {
    const tenant = scope.tenant_id;
    return this.db.async.unit(
      function* (t) {
        yield* t.sql('INSERT INTO link_strikes (tenant_id, share_id, ip, at) VALUES (?, ?, ?, ?)', [tenant, shareId, ip, now]);
        const [{ n }] = yield* t.sql<{ n: number }>('SELECT count(*) AS n FROM link_strikes WHERE tenant_id = ? AND share_id = ? AND ip = ? AND at > ?', [
          tenant,
          shareId,
          ip,
          since,
        ]);
        return Number(n);
      },
      { isolation: 'serializable' },
    );
  }

  async free(s: Slot, holder: string): Promise<void> {
    await this.db.async.sql('DELETE FROM link_streams WHERE tenant_id = ? AND share_id = ? AND slot = ? AND holder = ?', [
      s.tenant_id,
      s.shareId,
      s.slot,
      holder,
    ]);
  }

  /** Extends every slot `holder` holds in the tenants given (those it has streams in) to `until` (ms). */
  async renew(tenants: readonly TenantScope[], holder: string, until: number): Promise<void> {
    if (!tenants.length) return;
    await this.db.async.run(
      this.db.k
        .updateTable('link_streams')
        .set({ until })
        .where(
          'tenant_id',
          'in',
          tenants.map((s) => s.tenant_id),
        )
        .where('holder', '=', holder),
    );
  }

  /** Records that `ip` visited `shareId` at `now`; returns how many addresses it saw since `since` (ms). Serializable: see `strike`. */
  see(scope: TenantScope, shareId: number, ip: string, now: number, since: number): Promise<number> {
    const tenant = scope.tenant_id;
    return this.db.async.unit(
      function* (t) {
        yield* t.sql(
          'INSERT INTO link_visitors (tenant_id, share_id, ip, seen_at) VALUES (?, ?, ?, ?) ON CONFLICT (share_id, ip) DO UPDATE SET seen_at = excluded.seen_at',
          [tenant, shareId, ip, now],
        );
        const [{ n }] = yield* t.sql<{ n: number }>('SELECT count(*) AS n FROM link_visitors WHERE tenant_id = ? AND share_id = ? AND seen_at > ?', [
          tenant,
          shareId,
          since,
        ]);
        return Number(n);
      },
      { isolation: 'serializable' },
    );
  }

  /** Forgets a link's addresses and strikes (it was re-enabled). */
  async forget(scope: TenantScope, shareId: number): Promise<void> {
    const args = [scope.tenant_id, shareId];
    await this.db.async.unit(function* (t) {
      yield* t.sql('DELETE FROM link_visitors WHERE tenant_id = ? AND share_id = ?', args);
      yield* t.sql('DELETE FROM link_strikes WHERE tenant_id = ? AND share_id = ?', args);
    });
  }

  /**
   * Drops the tenant's slots whose lease passed before `now`, addresses seen at or before `seenBefore`,
   * strikes at or before `struckBefore`.
   */
  async prune(scope: TenantScope, now: number, seenBefore: number, struckBefore: number): Promise<void> {
    const tenant = scope.tenant_id;
    await this.db.async.unit(function* (t) {
      yield* t.sql('DELETE FROM link_streams WHERE tenant_id = ? AND until < ?', [tenant, now]);
      yield* t.sql('DELETE FROM link_visitors WHERE tenant_id = ? AND seen_at <= ?', [tenant, seenBefore]);
      yield* t.sql('DELETE FROM link_strikes WHERE tenant_id = ? AND at <= ?', [tenant, struckBefore]);
    });
  }
}
