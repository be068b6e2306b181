/**
 * The link guard's shared counters (owner: shares; tables `link_streams`,
 * `link_visitors`, `link_strikes`), decided in the database so several instances enforce one
 * limit. A stream takes the lowest free numbered slot of its link (1..cap)
 * with one conditional upsert: the primary key (share_id, slot) makes the cap
 * exact however many instances race, and a slot whose lease passed (its
 * instance died) is free again. Short synchronous statements only.
 */
import type { Db, Statement } from '../db';

/** An admitted stream's slot. */
export interface Slot {
  shareId: number;
  slot: number;
}

export class LinkLoadRepo {
  private s: Record<'take' | 'live' | 'holds' | 'free' | 'renew' | 'expire' | 'see' | 'seen' | 'forget' | 'forgetOld' | 'strike' | 'strikes' | 'forgetStrikes' | 'forgetOldStrikes', Statement>;

  constructor(db: Db) {
    const q = (text: string) => db.sqlite.prepare(text);
    // Candidates: slot 1 and the slot after each live one; the lowest not live and within the cap is taken.
    const live = 'SELECT slot FROM link_streams WHERE share_id = @share AND until >= @now';
    this.s = {
      take: q(
        `INSERT INTO link_streams (share_id, slot, holder, until, ip)
         SELECT CAST(@share AS BIGINT), min(c.slot), CAST(@holder AS TEXT), CAST(@until AS BIGINT), CAST(@ip AS TEXT)
         FROM (SELECT 1 AS slot UNION ALL SELECT slot + 1 FROM link_streams WHERE share_id = @share AND until >= @now) c
         WHERE c.slot <= @cap AND c.slot NOT IN (${live})
         HAVING min(c.slot) IS NOT NULL
         ON CONFLICT (share_id, slot) DO UPDATE SET holder = excluded.holder, until = excluded.until, ip = excluded.ip WHERE link_streams.until < @now
         RETURNING slot`,
      ),
      live: q('SELECT count(*) AS n FROM link_streams WHERE share_id = @share AND until >= @now'),
      holds: q('SELECT 1 AS y FROM link_streams WHERE share_id = ? AND ip = ? AND until >= ? LIMIT 1'),
      free: q('DELETE FROM link_streams WHERE share_id = ? AND slot = ? AND holder = ?'),
      renew: q('UPDATE link_streams SET until = ? WHERE holder = ?'),
      expire: q('DELETE FROM link_streams WHERE until < ?'),
      see: q('INSERT INTO link_visitors (share_id, ip, seen_at) VALUES (?, ?, ?) ON CONFLICT (share_id, ip) DO UPDATE SET seen_at = excluded.seen_at'),
      seen: q('SELECT count(*) AS n FROM link_visitors WHERE share_id = ? AND seen_at > ?'),
      forget: q('DELETE FROM link_visitors WHERE share_id = ?'),
      forgetOld: q('DELETE FROM link_visitors WHERE seen_at <= ?'),
      strike: q('INSERT INTO link_strikes (share_id, ip, at) VALUES (?, ?, ?)'),
      strikes: q('SELECT count(*) AS n FROM link_strikes WHERE share_id = ? AND ip = ? AND at > ?'),
      forgetStrikes: q('DELETE FROM link_strikes WHERE share_id = ?'),
      forgetOldStrikes: q('DELETE FROM link_strikes WHERE at <= ?'),
    };
  }

  /**
   * A free slot of `shareId` under `cap` for `holder` until `until` (ms), or null when every slot is live at
   * `now`; `ip` is the client's address.
   */
  take(shareId: number, cap: number, holder: string, until: number, now: number, ip: string | null = null): Slot | null {
    // Two instances may pick the same free slot: the loser gets no row back and looks again while the count shows room.
    for (let tries = 0; tries < 5; tries++) {
      const got = this.s.take.get({ share: shareId, cap, holder, until, now, ip }) as { slot: number } | undefined;
      if (got) return { shareId, slot: got.slot };
      if ((this.s.live.get({ share: shareId, now }) as { n: number }).n >= cap) return null;
    }
    return null;
  }

  /** Whether `ip` holds a live stream of `shareId` at `now` (on any instance). */
  holds(shareId: number, ip: string, now: number): boolean {
    return this.s.holds.get(shareId, ip, now) !== undefined;
  }

  /** Records an accelerator strike of `ip` on `shareId` at `now`; returns its strikes since `since` (ms). */
  strike(shareId: number, ip: string, now: number, since: number): number {
    this.s.strike.run(shareId, ip, now);
    return Number((this.s.strikes.get(shareId, ip, since) as { n: number }).n);
  }

  free(s: Slot, holder: string): void {
    this.s.free.run(s.shareId, s.slot, holder);
  }

  /** Extends every slot `holder` holds to `until` (ms). */
  renew(holder: string, until: number): void {
    this.s.renew.run(until, holder);
  }

  /** Records that `ip` visited `shareId` at `now`; returns how many addresses it saw since `since` (ms). */
  see(shareId: number, ip: string, now: number, since: number): number {
    this.s.see.run(shareId, ip, now);
    return (this.s.seen.get(shareId, since) as { n: number }).n;
  }

  forget(shareId: number): void {
    this.s.forget.run(shareId);
    this.s.forgetStrikes.run(shareId);
  }

  /** Drops slots whose lease passed before `now`, addresses seen at or before `seenBefore`, strikes at or before `struckBefore`. */
  prune(now: number, seenBefore: number, struckBefore: number): void {
    this.s.expire.run(now);
    this.s.forgetOld.run(seenBefore);
    this.s.forgetOldStrikes.run(struckBefore);
  }
}
