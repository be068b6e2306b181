/**
 * The uplink guard of public links: a cap on concurrent requests per link,
 * and automatic suspension on anomalies: more distinct client addresses in an
 * hour than the limit (a link posted somewhere public), or a download
 * accelerator (a known accelerator user agent opening parallel ranges, or one
 * address pushing ranged requests past the per-link cap again and again).
 * The cap and the addresses are counted in the database (`link-load.repo.ts`),
 * so several instances enforce one limit: one statement when a stream starts,
 * one when it ends, and one pair when an address is new to this instance in
 * the last minutes. Accelerator strikes are rows too (rare: only on an
 * anomaly), so an accelerator's ranges spread over instances by a proxy add
 * up; the suspension itself is a column of the share row.
 * Signed-in and LAN visitors never reach here.
 */
import { AppError } from '../errors';
import { LinkLoadRepo, type Slot } from './link-load.repo';
import { isBusy, type Db, type TenantScope } from '../db';
import type { ShareRow } from './shares.repo';
import type { SharesService } from './shares.service';

const HOUR = 3_600_000;
/** How often this instance writes an address it keeps seeing (the hour window is this exact). */
const SEEN_REFRESH_MS = 5 * 60_000;
/** Accelerator strikes of one address on one link within STRIKE_WINDOW_MS that suspend the link. */
export const ACCEL_STRIKES = 8;
const STRIKE_WINDOW_MS = 10 * 60_000;
/** Seconds a refused stream is told to wait. */
const RETRY_AFTER_S = 5;
/** User agents of download accelerators and multi-connection download managers. */
export const ACCELERATOR_UA =
  /\b(aria2|axel|Internet Download Manager|IDM\/|FDM|Free Download Manager|FlashGet|Thunder|Xunlei|NetTransport|DownThemAll|JDownloader|Download Accelerator|DAP\/|wxDownload|Mass Downloader|GetRight|Orbit|ReGet|lftp|uGet|Motrix|prozilla|mget)\b/i;

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

/** Who holds the streams: this instance's id and its lease on them (renewed every third while any is open). */
export interface GuardLease {
  instanceId: string;
  leaseMs: number;
}

/** What this instance keeps of a link: its own streams per address, addresses it wrote lately. */
interface LinkState {
  /** The link's tenant (its rows are written and renewed in it). */
  tenant: TenantScope;
  streams: number;
  perIp: Map<string, number>;
  /** Address → when this instance last wrote it to the database (ms). */
  seen: Map<string, number>;
}

export class LinkGuard {
  private links = new Map<number, LinkState>();
  private load: LinkLoadRepo;
  /** Slots whose freeing failed (database away): freed on the next renewal, never renewed meanwhile. */
  private unfreed: Slot[] = [];
  private timer: NodeJS.Timeout;

  constructor(
    private shares: SharesService,
    private limits: () => GuardLimits,
    db: Db,
    private lease: GuardLease,
    private log: (msg: string, err?: unknown) => void,
  ) {
    this.load = new LinkLoadRepo(db);
    this.timer = setInterval(() => void this.tick(), Math.max(50, Math.floor(lease.leaseMs / 3)));
    this.timer.unref();
  }

  /**
   * Admits one public request on `share`, or throws: `rate_limited` (429,
   * `retry_after`) over the per-link cap, `link_suspended` when this visit
   * tipped the link over a threshold. Returns the release to call when the
   * response closes.
   */
  async enter(share: ShareRow, v: Visit, now = Date.now()): Promise<() => void> {
    const lim = this.limits();
    const st = this.state(share);
    if (lim.maxAddresses > 0 && (st.seen.get(v.ip) ?? -Infinity) <= now - SEEN_REFRESH_MS) {
      st.seen.set(v.ip, now);
      const addresses = await this.load.see(share, share.id, v.ip, now, now - HOUR);
      if (addresses > lim.maxAddresses) await this.suspend(share, 'addresses', { addresses, ip: v.ip, ua: v.ua });
    }
    const mine = st.perIp.get(v.ip) ?? 0;
    // Another range while this address downloads the link: through this instance, or (capped links record the
    // address of each stream) through any other.
    if (v.ranged && ACCELERATOR_UA.test(v.ua) && (mine > 0 || (lim.maxStreams > 0 && (await this.load.holds(share, share.id, v.ip, now)))))
      await this.strike(share, v, now);
    const slot = lim.maxStreams > 0 ? await this.load.take(share, share.id, lim.maxStreams, this.lease.instanceId, now + this.lease.leaseMs, now, v.ip) : null;
    if (lim.maxStreams > 0 && !slot) {
      if (v.ranged) await this.strike(share, v, now);
      throw new AppError('rate_limited', { retry_after: RETRY_AFTER_S }, { retry_after: RETRY_AFTER_S, reason: 'link_streams', max: lim.maxStreams });
    }
    st.streams++;
    st.perIp.set(v.ip, mine + 1);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      if (slot) void this.free(slot);
      st.streams--;
      const left = (st.perIp.get(v.ip) ?? 1) - 1;
      if (left > 0) st.perIp.set(v.ip, left);
      else st.perIp.delete(v.ip);
      if (st.streams === 0 && st.seen.size === 0) this.links.delete(share.id);
    };
  }

  /** Stops renewing (at shutdown; the slots still open pass with their lease). */
  stop(): void {
    clearInterval(this.timer);
  }

  /** Forgets what was counted for a link (after a re-enable, so it starts clean). */
  async forget(share: Pick<ShareRow, 'id' | 'tenant_id'>): Promise<void> {
    await this.load.forget(share, share.id);
    const st = this.links.get(share.id);
    if (!st) return;
    st.seen.clear();
  }

  /** Public requests in flight on all links through this instance. */
  activeStreams(): number {
    let n = 0;
    for (const st of this.links.values()) n += st.streams;
    return n;
  }

  /**
   * Drops a tenant's hour-old addresses, passed slots and strikes of idle links (hourly, tenant by tenant, so
   * memory and tables stay bounded).
   */
  async prune(scope: TenantScope, now = Date.now()): Promise<void> {
    await this.load.prune(scope, now, now - HOUR, now - STRIKE_WINDOW_MS);
    for (const [id, st] of this.links) {
      if (st.tenant.tenant_id !== scope.tenant_id) continue;
      for (const [ip, at] of st.seen) if (at <= now - SEEN_REFRESH_MS) st.seen.delete(ip);
      if (st.streams === 0 && st.seen.size === 0) this.links.delete(id);
    }
  }

  /** Frees a slot; when the database refuses, the next tick tries again (and stops renewing it). */
  private async free(slot: Slot): Promise<void> {
    try {
      await this.load.free(slot, this.lease.instanceId);
    } catch {
      this.unfreed.push(slot);
    }
  }

  /** Renews this instance's slots while it has streams open; retries the frees that failed first. */
  private async tick(): Promise<void> {
    try {
      await Promise.all(this.unfreed.splice(0).map((s) => this.free(s)));
      if (this.unfreed.length === 0 && this.activeStreams() > 0)
        await this.load.renew(this.streamTenants(), this.lease.instanceId, Date.now() + this.lease.leaseMs);
    } catch (e) {
      // The database is away: the next tick renews; a lease that passes meanwhile frees the slots (exact, not lenient).
      if (!isBusy(e)) this.log('public link guard: renewing the stream slots failed', e);
    }
  }

  /** The tenants this instance has streams open in (its slots are renewed there). */
  private streamTenants(): TenantScope[] {
    const ids = new Set<number>();
    for (const st of this.links.values()) if (st.streams > 0) ids.add(st.tenant.tenant_id);
    return [...ids].map((tenant_id) => ({ tenant_id }));
  }

  private state(share: ShareRow): LinkState {
    let st = this.links.get(share.id);
    if (!st) this.links.set(share.id, (st = { tenant: { tenant_id: share.tenant_id }, streams: 0, perIp: new Map(), seen: new Map() }));
    return st;
  }

  private async strike(share: ShareRow, v: Visit, now: number): Promise<void> {
    if ((await this.load.strike(share, share.id, v.ip, now, now - STRIKE_WINDOW_MS)) >= ACCEL_STRIKES)
      await this.suspend(share, 'accelerator', { ip: v.ip, ua: v.ua });
  }

  private async suspend(share: ShareRow, reason: 'addresses' | 'accelerator', meta: { addresses?: number; ip: string; ua: string }): Promise<never> {
    await this.shares.suspend(share, reason, meta);
    await this.forget(share);
    throw new AppError('link_suspended', {}, { reason });
  }
}
