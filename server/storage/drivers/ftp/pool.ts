/**
 * A small pool of FTP sessions. An FTP control connection does one thing at a
 * time, so each caller leases a whole session; at most `max` sessions exist
 * and later callers queue in order. A session the server closed (idle
 * timeout, restart) is noticed by its `closed` flag and replaced on the next
 * lease, so the driver recovers without a restart.
 */
import type { Client } from 'basic-ftp';
import { AppError } from '../../../errors';

/** Idle sessions are closed after this long, so servers do not see lingering logins. */
const IDLE_CLOSE_MS = 60_000;

export interface Lease {
  readonly client: Client;
  /** True when the session served earlier calls (it may have died while idle). */
  readonly reused: boolean;
  /** Returns the session to the pool (or drops it when closed). Idempotent. */
  release(): void;
}

export class FtpPool {
  private readonly idle: Client[] = [];
  private readonly all = new Set<Client>();
  private readonly idleTimers = new Map<Client, NodeJS.Timeout>();
  private readonly waiters: Array<() => void> = [];
  private opening = 0;
  private closed = false;

  constructor(
    private readonly connect: () => Promise<Client>,
    private readonly max = 2,
  ) {}

  /** A session of the caller's own; waits while `max` are busy. Connection failures reject. */
  async acquire(): Promise<Lease> {
    for (;;) {
      if (this.closed) throw new AppError('storage_unreachable', { reason: 'driver closed' });
      const client = this.idle.pop();
      if (client) {
        clearTimeout(this.idleTimers.get(client));
        this.idleTimers.delete(client);
        if (client.closed) {
          this.all.delete(client);
          continue;
        }
        return this.lease(client, true);
      }
      if (this.all.size + this.opening < this.max) return this.lease(await this.open(), false);
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  /** Runs `fn` on a leased session and returns it afterwards, failed or not. */
  async run<T>(fn: (client: Client) => Promise<T>): Promise<T> {
    const lease = await this.acquire();
    try {
      return await fn(lease.client);
    } finally {
      lease.release();
    }
  }

  /** Closes every session, busy ones included; later leases fail. Idempotent. */
  close(): void {
    this.closed = true;
    for (const c of this.all) c.close();
    for (const t of this.idleTimers.values()) clearTimeout(t);
    this.all.clear();
    this.idle.length = 0;
    this.waiters.splice(0).forEach((wake) => wake());
  }

  private async open(): Promise<Client> {
    this.opening += 1;
    try {
      const client = await this.connect();
      this.all.add(client);
      return client;
    } catch (e) {
      // A failed open frees a slot someone may be waiting for.
      this.waiters.shift()?.();
      throw e;
    } finally {
      this.opening -= 1;
    }
  }

  private lease(client: Client, reused: boolean): Lease {
    let done = false;
    return {
      client,
      reused,
      release: () => {
        if (done) return;
        done = true;
        if (this.closed || client.closed) {
          client.close();
          this.all.delete(client);
        } else {
          this.idle.push(client);
          const timer = setTimeout(() => this.retire(client), IDLE_CLOSE_MS);
          timer.unref();
          this.idleTimers.set(client, timer);
        }
        this.waiters.shift()?.();
      },
    };
  }

  private retire(client: Client): void {
    const i = this.idle.indexOf(client);
    if (i < 0) return;
    this.idle.splice(i, 1);
    this.idleTimers.delete(client);
    this.all.delete(client);
    client.close();
  }
}
