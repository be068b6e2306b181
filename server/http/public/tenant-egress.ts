/**
 * Each tenant's share of the public uplink budget (docs/tenants.md, "Step 4: quotas"; the `egress_share`
 * quota, 1–99 %): a tenant's public transfers spend its own lane first, then the shared budget. The lane
 * holds the tenant to its share only while another tenant has a public transfer running; alone, a tenant
 * may use the whole budget (nobody is kept waiting for an idle share). Within the shared budget, streams
 * still take equal turns (lib/egress.ts). A tenant without a share spends the shared budget alone.
 */
import { Transform } from 'node:stream';
import type { TenantScope } from '../../db';
import { EgressShaper, type Pacer } from '../../lib/egress';

export class TenantEgress {
  private lanes = new Map<number, { shaper: EgressShaper; share: number }>();
  /** Public transfers running, per tenant. */
  private running = new Map<number, number>();

  constructor(
    private shared: EgressShaper,
    /** The tenant's share in percent (1–99), or null: none. */
    private shareOf: (t: TenantScope) => number | null,
  ) {}

  /** The pacer of tenant `t`'s public transfers. */
  pacer(t: TenantScope): Pacer {
    return {
      sender: () => this.sender(t),
      pace: () => {
        const s = this.sender(t);
        if (!s) return null;
        const stage = new Transform({
          transform(chunk: Buffer, _enc, cb) {
            const wait = s.spend(chunk.length);
            if (!wait) return cb(null, chunk);
            wait.then(() => cb(null, chunk), cb);
          },
        });
        stage.once('close', s.done);
        return stage;
      },
    };
  }

  /** What a lane's rate is now: the share of the budget while another tenant runs a transfer, else none (0). */
  rateOf(tenantId: number): number {
    const lane = this.lanes.get(tenantId);
    if (!lane) return 0;
    const others = [...this.running].some(([id, n]) => id !== tenantId && n > 0);
    return others ? Math.floor((this.shared.budget * lane.share) / 100) : 0;
  }

  private sender(t: TenantScope): ReturnType<Pacer['sender']> {
    const shared = this.shared.sender();
    if (!shared) return null;
    const lane = this.laneOf(t);
    this.count(t.tenant_id, 1);
    let open = true;
    return {
      chunk: shared.chunk,
      spend: (n) => {
        const first = lane?.spend(n);
        return first ? first.then(() => shared.spend(n)) : shared.spend(n);
      },
      done: () => {
        if (!open) return;
        open = false;
        shared.done();
        this.count(t.tenant_id, -1);
      },
    };
  }

  /** The tenant's lane, made or re-shared from its current quota; none without a share. */
  private laneOf(t: TenantScope): EgressShaper | null {
    const share = this.shareOf(t);
    if (share === null) {
      this.lanes.delete(t.tenant_id);
      return null;
    }
    let lane = this.lanes.get(t.tenant_id);
    if (!lane) this.lanes.set(t.tenant_id, (lane = { shaper: new EgressShaper(0), share }));
    lane.share = share;
    return lane.shaper;
  }

  /** A transfer started or ended: every lane's rate follows who is running now (changed only when it differs). */
  private count(tenantId: number, d: number): void {
    const n = (this.running.get(tenantId) ?? 0) + d;
    if (n > 0) this.running.set(tenantId, n);
    else this.running.delete(tenantId);
    for (const [id, lane] of this.lanes) {
      const rate = this.rateOf(id);
      if (rate !== lane.shaper.budget) lane.shaper.setRate(rate);
    }
  }
}
