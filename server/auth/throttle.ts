/**
 * Login throttling, checked BEFORE the password KDF runs: failures are
 * counted per account and per client address; past the limit the key is
 * locked for `lockMs` and answers 429 with a countdown. A small gate also
 * bounds how many KDF runs may be in flight, so a flood of distinct accounts
 * cannot pin the CPU. State is in memory (a restart forgives; documented).
 */
import { AppError } from '../errors';

interface Counter {
  failures: number;
  lockedUntil: number;
  firstAt: number;
}

export class LoginThrottle {
  private counters = new Map<string, Counter>();
  private inFlight = 0;

  constructor(private opts: { maxAttempts: number; lockMs: number; windowMs?: number; maxConcurrentKdf?: number; maxQueue?: number }) {}

  /** Throws 429 `rate_limited` when the account or the address is locked. */
  check(account: string, ip: string): void {
    const now = Date.now();
    for (const key of [`a:${account.toLowerCase()}`, `i:${ip}`]) {
      const c = this.counters.get(key);
      if (c && c.lockedUntil > now) {
        const retry = Math.ceil((c.lockedUntil - now) / 1000);
        throw new AppError('rate_limited', { retry_after: retry }, { retry_after: retry });
      }
    }
  }

  /** Runs the KDF under the concurrency gate; refuses with 429 when too many wait. */
  async gate<T>(fn: () => Promise<T>): Promise<T> {
    const max = this.opts.maxConcurrentKdf ?? 4;
    if (this.inFlight >= max + (this.opts.maxQueue ?? 32)) throw new AppError('rate_limited', { retry_after: 1 }, { retry_after: 1 });
    while (this.inFlight >= max) await new Promise((r) => setTimeout(r, 5));
    this.inFlight++;
    try {
      return await fn();
    } finally {
      this.inFlight--;
    }
  }

  /** Records a failure; returns the tries left for the account (0 means now locked). */
  fail(account: string, ip: string): number {
    const a = this.bump(`a:${account.toLowerCase()}`, this.opts.maxAttempts);
    this.bump(`i:${ip}`, this.opts.maxAttempts * 2);
    return Math.max(0, this.opts.maxAttempts - a.failures);
  }

  succeed(account: string): void {
    this.counters.delete(`a:${account.toLowerCase()}`);
  }

  private bump(key: string, limit: number): Counter {
    const now = Date.now();
    const windowMs = this.opts.windowMs ?? this.opts.lockMs;
    let c = this.counters.get(key);
    if (!c || (c.lockedUntil && c.lockedUntil <= now) || now - c.firstAt > windowMs) c = { failures: 0, lockedUntil: 0, firstAt: now };
    c.failures++;
    if (c.failures >= limit) c.lockedUntil = now + this.opts.lockMs;
    this.counters.set(key, c);
    if (this.counters.size > 100_000) this.sweep();
    return c;
  }

  private sweep(): void {
    const now = Date.now();
    for (const [k, c] of this.counters) if (c.lockedUntil < now && now - c.firstAt > (this.opts.windowMs ?? this.opts.lockMs)) this.counters.delete(k);
  }
}
