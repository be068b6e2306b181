/**
 * The link guard's shared counters (owner: shares; tables `link_streams`,
 * `link_visitors`), decided in the database so several instances enforce one
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
  private s: Record<'take' | 'live' | 'free' | 'renew' | 'expire' | 'see' | 'seen' | 'forget' | 'forgetOld', Statement>;

  constructor(db: Db) {
    const q = (text: string) => db.sqlite.prepare(text);
    // Candidates: slot 1 and the slot after each live one; the lowest not live and within the cap is taken.
    const live = 'SELECT slot FROM link_streams WHERE share_id = @share AND until >= @now';
    this.s = {
      take: q(
        `INSERT INTO link_streams (share_id, slot, holder, until)
         SELECT CAST(@share AS BIGINT), min(c.slot), CAST(@holder AS TEXT), CAST(@until AS BIGINT)
         FROM (SELECT 1 AS slot UNION ALL SELECT slot + 1 FROM link_streams WHERE share_id = @share AND until >= @now) c
         WHERE c.slot <= @cap AND c.slot NOT IN (${live})
         HAVING min(c.slot) IS NOT NULL
         ON CONFLICT (share_id, slot) DO UPDATE SET holder = excluded.holder, until = excluded.until WHERE link_streams.until < @now
         RETURNING slot`,
      ),
      live: q('SELECT count(*) AS n FROM link_streams WHERE share_id = @share AND until >= @now'),
      free: q('DELETE FROM link_streams WHERE share_id = ? AND slot = ? AND holder = ?'),
      renew: q('UPDATE link_streams SET until = ? WHERE holder = ?'),
      expire: q('DELETE FROM link_streams WHERE until < ?'),
      see: q('INSERT INTO link_visitors (share_id, ip, seen_at) VALUES (?, ?, ?) ON CONFLICT (share_id, ip) DO UPDATE SET seen_at = excluded.seen_at'),
      seen: q('SELECT count(*) AS n FROM link_visitors WHERE share_id = ? AND seen_at > ?'),
      forget: q('DELETE FROM link_visitors WHERE share_id = ?'),
      forgetOld: q('DELETE FROM link_visitors WHERE seen_at <= ?'),
    };
  }

  /** A free slot of `shareId` under `cap` for `holder` until `until` (ms), or null when every slot is live at `now`. */
  take(shareId: number, cap: number, holder: string, until: number, now: number): Slot | null {
    // Two instances may pick the same free slot: the loser gets no row back and looks again while the count shows room.
    for (let tries = 0; tries < 5; tries++) {
      const got = this.s.take.get({ share: shareId, cap, holder, until, now }) as { slot: number } | undefined;
      if (got) return { shareId, slot: got.slot };
      if ((this.s.live.get({ share: shareId, now }) as { n: number }).n >= cap) return null;
    }
    return null;
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
  }

  /** Drops slots whose lease passed before `now` and addresses seen at or before `seenBefore`. */
  prune(now: number, seenBefore: number): void {
    this.s.expire.run(now);
    this.s.forgetOld.run(seenBefore);
  }
}
