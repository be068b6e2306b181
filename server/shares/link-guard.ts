/**
 * The uplink guard of public links: a cap on concurrent requests per link,
 * and automatic suspension on anomalies: more distinct client addresses in an
 * hour than the limit (a link posted somewhere public), or a download
 * accelerator (a known accelerator user agent opening parallel ranges, or one
 * address pushing ranged requests past the per-link cap again and again).
 * Counters live in memory (a restart forgives); the suspension itself is a
 * column of the share row. Signed-in and LAN visitors never reach here.
 */
import { AppError } from '../errors';
import type { ShareRow } from './shares.repo';
import type { SharesService } from './shares.service';

const HOUR = 3_600_000;
/** Accelerator strikes of one address on one link within STRIKE_WINDOW_MS that suspend the link. */
export const ACCEL_STRIKES = 8;
const STRIKE_WINDOW_MS = 10 * 60_000;
/** Seconds a refused stream is told to wait. */
const RETRY_AFTER_S = 5;
/** User agents of download accelerators and multi-connection download managers. */
export const ACCELERATOR_UA = /\b(aria2|axel|Internet Download Manager|IDM\/|FDM|Free Download Manager|FlashGet|Thunder|Xunlei|NetTransport|DownThemAll|JDownloader|Download Accelerator|DAP\/|wxDownload|Mass Downloader|GetRight|Orbit|ReGet|lftp|uGet|Motrix|prozilla|mget)\b/i;

export interface GuardLimits {
  /** Concurrent requests per link (0 = no cap). */
  maxStreams: number;
  /** Distinct client addresses per link and hour before suspension (0 = never). */
  maxAddresses: number;
}

export interface Visit {
  ip: string;
  ua: string;
  /** The request carries a `Range` header. */
  ranged: boolean;
}

interface LinkState {
  streams: number;
  perIp: Map<string, number>;
  /** Address → last seen (ms). */
  seen: Map<string, number>;
  /** Address → strike times (ms). */
  strikes: Map<string, number[]>;
}

export class LinkGuard {
  private links = new Map<number, LinkState>();

  constructor(private shares: SharesService, private limits: () => GuardLimits) {}

  /**
   * Admits one public request on `share`, or throws: `rate_limited` (429,
   * `retry_after`) over the per-link cap, `link_suspended` when this visit
   * tipped the link over a threshold. Returns the release to call when the
   * response closes.
   */
  async enter(share: ShareRow, v: Visit, now = Date.now()): Promise<() => void> {
    const lim = this.limits();
    const st = this.state(share.id);
    st.seen.set(v.ip, now);
    if (lim.maxAddresses > 0 && st.seen.size > lim.maxAddresses) {
      for (const [ip, at] of st.seen) if (at <= now - HOUR) st.seen.delete(ip);
      if (st.seen.size > lim.maxAddresses) await this.suspend(share, 'addresses', { addresses: st.seen.size, ip: v.ip, ua: v.ua });
    }
    const mine = st.perIp.get(v.ip) ?? 0;
    if (v.ranged && mine > 0 && ACCELERATOR_UA.test(v.ua)) await this.strike(share, st, v, now);
    if (lim.maxStreams > 0 && st.streams >= lim.maxStreams) {
      if (v.ranged) await this.strike(share, st, v, now);
      throw new AppError('rate_limited', { retry_after: RETRY_AFTER_S }, { retry_after: RETRY_AFTER_S, reason: 'link_streams', max: lim.maxStreams });
    }
    st.streams++;
    st.perIp.set(v.ip, mine + 1);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      st.streams--;
      const left = (st.perIp.get(v.ip) ?? 1) - 1;
      if (left > 0) st.perIp.set(v.ip, left);
      else st.perIp.delete(v.ip);
      if (st.streams === 0 && st.seen.size === 0) this.links.delete(share.id);
    };
  }

  /** Forgets what was counted for a link (after a re-enable, so it starts clean). */
  forget(shareId: number): void {
    const st = this.links.get(shareId);
    if (!st) return;
    st.seen.clear();
    st.strikes.clear();
  }

  /** Public requests in flight on all links. */
  activeStreams(): number {
    let n = 0;
    for (const st of this.links.values()) n += st.streams;
    return n;
  }

  /** Drops hour-old addresses and strikes of idle links (hourly, so memory stays bounded). */
  prune(now = Date.now()): void {
    for (const [id, st] of this.links) {
      for (const [ip, at] of st.seen) if (at <= now - HOUR) st.seen.delete(ip);
      for (const [ip, times] of st.strikes) if (times[times.length - 1] <= now - STRIKE_WINDOW_MS) st.strikes.delete(ip);
      if (st.streams === 0 && st.seen.size === 0) this.links.delete(id);
    }
  }

  private state(id: number): LinkState {
    let st = this.links.get(id);
    if (!st) this.links.set(id, (st = { streams: 0, perIp: new Map(), seen: new Map(), strikes: new Map() }));
    return st;
  }

  private async strike(share: ShareRow, st: LinkState, v: Visit, now: number): Promise<void> {
    const times = (st.strikes.get(v.ip) ?? []).filter((t) => t > now - STRIKE_WINDOW_MS);
    times.push(now);
    st.strikes.set(v.ip, times);
    if (times.length >= ACCEL_STRIKES) await this.suspend(share, 'accelerator', { ip: v.ip, ua: v.ua });
  }

  private async suspend(share: ShareRow, reason: 'addresses' | 'accelerator', meta: { addresses?: number; ip: string; ua: string }): Promise<never> {
    await this.shares.suspend(share, reason, meta);
    this.forget(share.id);
    throw new AppError('link_suspended', {}, { reason });
  }
}
