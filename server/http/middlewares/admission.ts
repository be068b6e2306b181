/**
 * Admission control for the heavy read routes (listing, search). At most
 * `maxActive` of them run at once; the rest wait in a bounded queue, served
 * round-robin across callers (a signed-in person, else a client address), so
 * one client with 200 connections cannot starve the others. A full queue, a
 * caller over its share of it, or a wait past `maxWaitMs` answers 503
 * `server_busy` with Retry-After.
 *
 * Heavy work also runs in time slices of SLICE_MS: a listing is synchronous,
 * so a slot frees before the next request is even read, and a concurrency
 * limit alone let one poll phase run 200 listings back to back (~80 ms before
 * a capabilities request in the same phase was answered). Once a slice is
 * spent, heavy requests wait for the next `setImmediate`, after the loop has
 * polled its sockets: the light routes (capabilities, sign-in, public links),
 * which never pass through here, are answered between slices.
 */
import { AppError } from '../../errors';
import type { Mw } from '../context';

export interface AdmissionOptions {
  /** Heavy requests running at once. */
  maxActive: number;
  /** Waiting requests in all; one caller may hold at most a quarter of them (at least 8). */
  maxQueued: number;
  /** The longest a request waits for a slot before 503. */
  maxWaitMs: number;
}

export interface AdmissionStats {
  active: number;
  queued: number;
  /** Callers with requests waiting. */
  callers_waiting: number;
  admitted: number;
  rejected: number;
  timed_out: number;
  /** The longest wait of an admitted request, in ms. */
  max_wait_ms: number;
  limits: { max_active: number; max_queued: number; max_wait_ms: number };
}

/** Heavy work the loop does before it polls its sockets again. */
const SLICE_MS = 8;

interface Waiter {
  at: number;
  admit(): void;
  timer: NodeJS.Timeout;
}

export class Admission {
  private active = 0;
  /** Waiting requests per caller; Map order is the round-robin order. */
  private queues = new Map<string, Waiter[]>();
  private queued = 0;
  /** When the current slice began (performance.now()), or -1 between slices; a slice's end is always scheduled. */
  private sliceStart = -1;
  private counters = { admitted: 0, rejected: 0, timed_out: 0, max_wait_ms: 0 };

  constructor(private o: AdmissionOptions) {}

  /**
   * The middleware: waits for a slot (or throws `server_busy`), runs the rest
   * of the chain, frees the slot. Run it after authentication, so callers are
   * told apart by who they are, not only by where they come from.
   */
  middleware(): Mw {
    return async (ctx, next) => {
      const caller = ctx.state.principal ? `u${ctx.state.principal.id}` : `a${ctx.state.ip}`;
      await this.acquire(caller);
      try {
        await next();
      } finally {
        this.release();
      }
    };
  }

  /** Resolves when the caller may run; rejects with `server_busy` when the queue is full or the wait ran out. */
  acquire(caller: string): Promise<void> {
    if (this.active < this.o.maxActive && this.queued === 0 && this.sliceOpen()) {
      this.active++;
      this.counters.admitted++;
      return Promise.resolve();
    }
    const mine = this.queues.get(caller);
    const share = Math.max(8, Math.floor(this.o.maxQueued / 4));
    if (this.queued >= this.o.maxQueued || (mine?.length ?? 0) >= share) {
      this.counters.rejected++;
      return Promise.reject(busy(this.o.maxWaitMs));
    }
    return new Promise((resolve, reject) => {
      const w: Waiter = {
        at: Date.now(),
        admit: resolve,
        timer: setTimeout(() => {
          const list = this.queues.get(caller);
          const i = list?.indexOf(w) ?? -1;
          if (i < 0) return;
          list!.splice(i, 1);
          if (list!.length === 0) this.queues.delete(caller);
          this.queued--;
          this.counters.timed_out++;
          reject(busy(this.o.maxWaitMs));
        }, this.o.maxWaitMs),
      };
      w.timer.unref();
      if (mine) mine.push(w);
      else this.queues.set(caller, [w]);
      this.queued++;
      if (this.sliceStart < 0 && this.active < this.o.maxActive) this.sliceOpen(); // schedules the dispatch
    });
  }

  /** Frees a slot; the next waiter (next caller in turn) runs now while the slice lasts, else after the loop has polled. */
  release(): void {
    this.active--;
    this.dispatch();
  }

  stats(): AdmissionStats {
    return {
      active: this.active,
      queued: this.queued,
      callers_waiting: this.queues.size,
      ...this.counters,
      limits: { max_active: this.o.maxActive, max_queued: this.o.maxQueued, max_wait_ms: this.o.maxWaitMs },
    };
  }

  private dispatch(): void {
    while (this.active < this.o.maxActive && this.queued > 0 && this.sliceOpen()) {
      // The first caller in the map is next; after its turn it goes to the back.
      const [caller, list] = this.queues.entries().next().value as [string, Waiter[]];
      const w = list.shift()!;
      this.queues.delete(caller);
      if (list.length) this.queues.set(caller, list);
      this.queued--;
      clearTimeout(w.timer);
      this.active++;
      this.counters.admitted++;
      this.counters.max_wait_ms = Math.max(this.counters.max_wait_ms, Date.now() - w.at);
      w.admit();
    }
  }

  /** True while the current slice has time left; starts a slice (and schedules its end) when none runs. */
  private sliceOpen(): boolean {
    const now = performance.now();
    if (this.sliceStart < 0) {
      this.sliceStart = now;
      setImmediate(() => {
        this.sliceStart = -1;
        this.dispatch();
      });
      return true;
    }
    return now - this.sliceStart < SLICE_MS;
  }
}

const busy = (waitMs: number) => new AppError('server_busy', { retry_after: Math.max(1, Math.ceil(waitMs / 1000)) });
