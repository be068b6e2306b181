/**
 * What a tenant's files take, for its quotas (docs/tenants.md, "Step 4: quotas"): one aggregate of the
 * catalogue per tenant (`NodesRepo.usage`: live files, their bytes), held in memory and moved by the write
 * gate's deltas (a write's row before and after; a removal's deleted rows), so neither counts the tenant's
 * files again. A sync batch or a taken-back write drops the tenant's figure (the next check counts once more); a figure older than `ttlMs` is counted
 * again too, which is how another instance's writes reach this one. Bytes a write is streaming right now are
 * held (`hold`) so that two writes at once cannot both take the last room.
 */
import type { TenantScope } from '../db';
import type { NodesRepo } from './nodes.repo';

/** Live files and their bytes. */
export interface StorageUse {
  bytes: number;
  files: number;
}

const TTL_MS = 30_000;

export class TenantUsage {
  private figures = new Map<number, StorageUse & { at: number }>();
  private inFlight = new Map<number, number>();

  constructor(
    private nodes: Pick<NodesRepo, 'usage'>,
    private ttlMs = TTL_MS,
  ) {}

  /** The tenant's files and bytes, plus the bytes held by writes in flight. */
  async of(t: TenantScope): Promise<StorageUse> {
    let f = this.figures.get(t.tenant_id);
    if (!f || Date.now() - f.at > this.ttlMs) {
      const u = await this.nodes.usage(t, {});
      f = { bytes: Number(u.used_bytes), files: Number(u.file_count), at: Date.now() };
      this.figures.set(t.tenant_id, f);
    }
    return { bytes: f.bytes + (this.inFlight.get(t.tenant_id) ?? 0), files: f.files };
  }

  /** A write the gate recorded changed the tenant's files by `d` (a figure not held yet is left to be counted). */
  changed(t: TenantScope, d: StorageUse): void {
    const f = this.figures.get(t.tenant_id);
    if (!f) return;
    f.bytes += d.bytes;
    f.files += d.files;
  }

  /** Rows went or came without a delta (a sync, a taken-back write): counted again at the next check. */
  forget(t: TenantScope): void {
    this.figures.delete(t.tenant_id);
  }

  /** Holds `bytes` for a write in flight; the returned function lets go of them (idempotent). */
  hold(t: TenantScope, bytes: number): () => void {
    if (bytes <= 0) return () => {};
    this.inFlight.set(t.tenant_id, (this.inFlight.get(t.tenant_id) ?? 0) + bytes);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      const left = (this.inFlight.get(t.tenant_id) ?? 0) - bytes;
      if (left > 0) this.inFlight.set(t.tenant_id, left);
      else this.inFlight.delete(t.tenant_id);
    };
  }
}
