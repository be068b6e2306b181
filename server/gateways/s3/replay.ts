/**
 * Replay protection as far as SigV4 allows: a header-signed request that
 * changed something (PUT, POST, DELETE answered with success) is remembered
 * by its signature until its signing time leaves the skew window; the same
 * signature again is a replay and is refused. Only successes are remembered,
 * so a client that retries a failed request with the same signature (a retry
 * within the same second signs identically) still gets through. Reads and
 * presigned URLs (meant to be used more than once) are not tracked.
 */
import { MAX_SKEW_MS } from './sigv4';

/** The most signatures remembered; the oldest go first beyond it. */
const MAX_ENTRIES = 100_000;

export class ReplayGuard {
  /** signature → when it stops being acceptable anyway (ms); insertion order is expiry order within a skew window. */
  private seen = new Map<string, number>();

  /** Whether `signature` was already used for a completed write. */
  replayed(signature: string, now = Date.now()): boolean {
    const until = this.seen.get(signature);
    return until !== undefined && until > now;
  }

  /** Remembers a completed write's signature, signed at `signedAt` (ms). */
  remember(signature: string, signedAt: number, now = Date.now()): void {
    this.seen.set(signature, signedAt + MAX_SKEW_MS);
    // Lazy pruning from the oldest end: no timer, bounded memory.
    for (const [sig, until] of this.seen) {
      if (until > now && this.seen.size <= MAX_ENTRIES) break;
      this.seen.delete(sig);
    }
  }
}
