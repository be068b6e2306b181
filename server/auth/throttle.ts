/**
 * Login throttling, checked BEFORE the password KDF runs: failures are
 * counted per account (the login as typed), per client address and, for
 * second-step codes and password re-entry, per person; past the limit the key is
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

  /**
   * Throws 429 `rate_limited` when the account (the login as typed), the
   * address or the person (`userId`: second-step and password re-entry
   * failures count there) is locked. `account` null skips the login key.
   */
  check(account: string | null, ip: string, userId?: number): void {
    const now = Date.now();
    for (const key of keys(account, ip, userId)) {
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

  /**
   * Records a failure against the login, the address and the person (when
   * given); returns the tries left before the account locks (the fewer of the
   * login's and the person's; 0 means now locked).
   */
  fail(account: string | null, ip: string, userId?: number): number {
    let left = this.opts.maxAttempts;
    for (const key of keys(account, ip, userId)) {
      const limit = key.startsWith('i:') ? this.opts.maxAttempts * 2 : this.opts.maxAttempts;
      const c = this.bump(key, limit);
      if (!key.startsWith('i:')) left = Math.min(left, limit - c.failures);
    }
    return Math.max(0, left);
  }

  /** Forgets the failures of a login (and of the person) after a completed sign-in. */
  succeed(account: string | null, userId?: number): void {
    for (const key of keys(account, '', userId)) if (!key.startsWith('i:')) this.counters.delete(key);
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

const keys = (account: string | null, ip: string, userId?: number): string[] => [
  ...(account === null ? [] : [`a:${account.toLowerCase()}`]),
  `i:${ip}`,
  ...(userId === undefined ? [] : [`u:${userId}`]),
];
