/**
 * Per-address fixed-window counters for the anonymous routes. In memory on
 * purpose: a restart forgives, and the PIN lock (the one limit that must
 * survive restarts) lives on the share row instead.
 */
import { AppError } from '../errors';

export class RateLimiter {
  private hits = new Map<string, { n: number; until: number }>();

  constructor(
    private max: number,
    private windowMs: number,
  ) {}

  /** Counts one hit for `key`; over the limit → `rate_limited` with `retry_after` (seconds). */
  hit(key: string, now = Date.now()): void {
    let h = this.hits.get(key);
    if (!h || h.until <= now) {
      if (this.hits.size > 50_000) this.prune(now);
      h = { n: 0, until: now + this.windowMs };
      this.hits.set(key, h);
    }
    if (++h.n > this.max) {
      const retry_after = Math.max(1, Math.ceil((h.until - now) / 1000));
      throw new AppError('rate_limited', { retry_after }, { retry_after });
    }
  }

  private prune(now: number): void {
    for (const [k, h] of this.hits) if (h.until <= now) this.hits.delete(k);
  }
}
