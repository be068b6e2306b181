/**
 * One write's turn at its tenant's storage quotas (docs/tenants.md, "Step 4: quotas"), taken by every write
 * of the file service before its bytes land: refused at once from the declared size, the bytes held while
 * they stream (two writes at once cannot both take the last room), a body of unknown length cut off at what
 * is free, and checked again with the written size before the write gate records it.
 */
import type { Readable } from 'node:stream';
import type { TenantScope } from '../db';
import { capBytes } from '../lib/streams';
import type { QuotaPort } from './file-service';

export interface QuotaTurn {
  /** `body`, failing with the quota's refusal past the room left (as is when the size was declared or nothing bounds it). */
  bound(body: Readable): Readable;
  /** At completion: the check again with the `size` written, beyond what is held (throws `quota_exceeded`). */
  settle(size: number): Promise<void>;
  /** Lets go of the hold, once the write gate recorded the write (or it failed); idempotent. */
  release(): void;
}

const FREE: QuotaTurn = { bound: (b) => b, settle: async () => {}, release: () => {} };

/**
 * Takes the turn of a write of `declared` bytes (undefined: not known) into tenant `t`, replacing `was` bytes
 * of a file (0 for a new path), a new file when `created`. Without a quota port, nothing is checked.
 */
export async function quotaTurn(port: QuotaPort | undefined, t: TenantScope, declared: number | undefined, was: number, created: boolean): Promise<QuotaTurn> {
  if (!port) return FREE;
  const files = created ? 1 : 0;
  const adding = Math.max(0, (declared ?? 0) - was);
  const { free, over } = await port.room(t, adding, files);
  if (!Number.isFinite(free)) return FREE;
  const release = port.hold(t, adding);
  return {
    bound: (body) => (declared === undefined ? capBytes(body, free + was, over) : body),
    // The held bytes already count in the tenant's use: only what the write took beyond them is checked again.
    settle: async (size) => void (await port.room(t, Math.max(0, size - was - adding), files)),
    release,
  };
}
