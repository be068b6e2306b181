/**
 * Login throttling, checked BEFORE the password KDF runs: failures are
 * counted per account (the login as typed), per client address and, for
 * second-step codes and password re-entry, per person; past the limit the key is
 * locked for `lockMs` and answers 429 with a countdown. A small gate also
 * bounds how many KDF runs may be in flight, so a flood of distinct accounts
 * cannot pin the CPU. On SQLite the counters are in memory (one instance; a
 * restart forgives; documented). With several instances on one PostgreSQL
 * database they are rows of `login_failures`, one atomic upsert per failure,
 * so every instance counts against the same limit (docs/operations.md).
 */
import { AppError } from '../errors';
import { DEFAULT_TENANT, type Db, type TenantScope } from '../db';
import { LoginFailuresRepo, type FailureCounter } from './login-failures.repo';

type Counter = FailureCounter;

/** A login as typed, in the tenant it was typed in: the same name in two tenants is two accounts, two locks. */
export type TenantLogin = TenantScope & { login: string };

/** Where the counters live: this process's memory, or the shared database. */
interface CounterStore {
  get(key: string): Promise<Counter | undefined>;
  /** Counts one failure (a new window when the last lock ended or the window passed); locks at `limit`. */
  bump(key: string, limit: number, windowMs: number, lockMs: number): Promise<Counter>;
  forget(key: string): Promise<void>;
}

class MemoryCounters implements CounterStore {
  private counters = new Map<string, Counter>();
  async get(key: string) {
    return this.counters.get(key);
  }
  async bump(key: string, limit: number, windowMs: number, lockMs: number): Promise<Counter> {
    const now = Date.now();
    let c = this.counters.get(key);
    if (!c || (c.lockedUntil && c.lockedUntil <= now) || now - c.firstAt > windowMs) c = { failures: 0, lockedUntil: 0, firstAt: now };
    c.failures++;
    if (c.failures >= limit) c.lockedUntil = now + lockMs;
    this.counters.set(key, c);
    if (this.counters.size > 100_000) {
      for (const [k, x] of this.counters) if (x.lockedUntil < now && now - x.firstAt > windowMs) this.counters.delete(k);
    }
    return c;
  }
  async forget(key: string) {
    this.counters.delete(key);
  }
}

/** The counters as rows of the shared database (login-failures.repo.ts), one conditional upsert per failure. */
class DbCounters implements CounterStore {
  private bumps = 0;
  private repo: LoginFailuresRepo;
  constructor(
    db: Db,
    private scope: string,
  ) {
    this.repo = new LoginFailuresRepo(db);
  }
  get(key: string): Promise<Counter | undefined> {
    return this.repo.get(`${this.scope}|${key}`);
  }
  async bump(key: string, limit: number, windowMs: number, lockMs: number): Promise<Counter> {
    const now = Date.now();
    const c = await this.repo.bump(`${this.scope}|${key}`, limit, windowMs, lockMs, now);
    if (++this.bumps % 500 === 0) await this.repo.prune(now, windowMs);
    return c;
  }
  forget(key: string): Promise<void> {
    return this.repo.forget(`${this.scope}|${key}`);
  }
}

export class LoginThrottle {
  private counters: CounterStore;
  private inFlight = 0;

  /**
   * `shared`: the database and a scope name when several instances may share it (PostgreSQL); the counters
   * are then rows every instance reads and bumps. Without it they stay in this process's memory.
   */
  constructor(
    private opts: { maxAttempts: number; lockMs: number; windowMs?: number; maxConcurrentKdf?: number; maxQueue?: number; shared?: { db: Db; scope: string } },
  ) {
    this.counters = opts.shared ? new DbCounters(opts.shared.db, opts.shared.scope) : new MemoryCounters();
  }

  /**
   * Throws 429 `rate_limited` when the account (the login as typed, in its tenant), the
   * address or the person (`userId`: second-step and password re-entry
   * failures count there) is locked. `account` null skips the login key.
   */
  async check(account: TenantLogin | null, ip: string, userId?: number): Promise<void> {
    const now = Date.now();
    for (const key of keys(account, ip, userId)) {
      const c = await this.counters.get(key);
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
  async fail(account: TenantLogin | null, ip: string, userId?: number): Promise<number> {
    let left = this.opts.maxAttempts;
    for (const key of keys(account, ip, userId)) {
      const limit = key.startsWith('i:') ? this.opts.maxAttempts * 2 : this.opts.maxAttempts;
      const c = await this.bump(key, limit);
      if (!key.startsWith('i:')) left = Math.min(left, limit - c.failures);
    }
    return Math.max(0, left);
  }

  /** Forgets the failures of a login (and of the person) after a completed sign-in. */
  async succeed(account: TenantLogin | null, userId?: number): Promise<void> {
    for (const key of keys(account, '', userId)) if (!key.startsWith('i:')) await this.counters.forget(key);
  }

  private bump(key: string, limit: number): Promise<Counter> {
    return this.counters.bump(key, limit, this.opts.windowMs ?? this.opts.lockMs, this.opts.lockMs);
  }
}

/** Tenant 1's logins keep the key they had before tenants (`a:<login>`), so counters already stored still apply. */
const accountKey = (a: TenantLogin): string => `a${a.tenant_id === DEFAULT_TENANT.tenant_id ? '' : a.tenant_id}:${a.login.toLowerCase()}`;

const keys = (account: TenantLogin | null, ip: string, userId?: number): string[] => [
  ...(account === null ? [] : [accountKey(account)]),
  `i:${ip}`,
  ...(userId === undefined ? [] : [`u:${userId}`]),
];
