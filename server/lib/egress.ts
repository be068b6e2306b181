/**
 * One shared upload budget (bytes per second) for many response streams: a
 * token bucket with a FIFO of waiting streams. Each stream waits with at most
 * one slice at a time, so the queue is a round robin and every stream gets an
 * equal share of the budget, whatever its chunk size. One timer serves the
 * whole queue (never one per chunk); with tokens at hand and nobody waiting a
 * chunk passes at once, whole. With no budget `pace()` gives null: the caller
 * adds no stage at all.
 */
import { Transform } from 'node:stream';

/** How far back `currentBps` looks (whole seconds). */
const WINDOW_S = 4;

interface Waiter {
  n: number;
  grant: () => void;
}

export interface EgressStats {
  budget_bps: number;
  current_bps: number;
  active_streams: number;
  waiting_streams: number;
  bytes_total: number;
}

/** What a public transfer spends its bytes through: the shared budget itself, or a tenant's share of it first. */
export interface Pacer {
  /** A pass-through stage that spends the budget, or null when there is none. */
  pace(): Transform | null;
  /** For senders that write their own chunks (see `EgressShaper.sender`), or null when there is no budget. */
  sender(): { chunk: number; spend: (n: number) => Promise<void> | undefined; done: () => void } | null;
}

export class EgressShaper implements Pacer {
  private rate = 0;
  private slice = 0;
  private burst = 0;
  /** The cap while streams wait: what a late timer owes them is kept, up to half a second of the budget. */
  private owed = 0;
  private tokens = 0;
  private last = 0;
  private waiters: Waiter[] = [];
  private timer: NodeJS.Timeout | null = null;
  private serving = false;
  private active = 0;
  private total = 0;
  /** Bytes granted per second, a ring of WINDOW_S + 1 buckets stamped with their second. */
  private buckets = new Float64Array(WINDOW_S + 1);
  private stamps = new Float64Array(WINDOW_S + 1);

  constructor(bytesPerSecond = 0) {
    this.setRate(bytesPerSecond);
  }

  /** Changes the budget at once (0 = unlimited: waiting streams are released). */
  setRate(bytesPerSecond: number): void {
    this.rate = Math.max(0, bytesPerSecond);
    // A slice is ~20 ms of the budget: small enough to interleave streams, large enough to stay cheap.
    this.slice = Math.min(256 * 1024, Math.max(16 * 1024, Math.floor(this.rate / 50)));
    this.burst = Math.max(2 * this.slice, Math.floor(this.rate / 20));
    this.owed = Math.max(this.burst, Math.floor(this.rate / 2));
    this.tokens = this.burst;
    this.last = Date.now();
    if (this.rate === 0) for (const w of this.waiters.splice(0)) w.grant();
    else this.serve();
  }

  get budget(): number {
    return this.rate;
  }

  /** A pass-through stage that spends the budget, or null when there is none. */
  pace(): Transform | null {
    if (this.rate === 0) return null;
    const shaper = this;
    let mine: Waiter | null = null;
    this.active++;
    const t = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        let off = 0;
        const step = () => {
          mine = null;
          while (off < chunk.length) {
            const left = chunk.length - off;
            let n = left;
            if (!shaper.take(n)) {
              n = Math.min(left, shaper.slice);
              if (!shaper.take(n)) {
                mine = { n, grant: () => (this.push(chunk.subarray(off, (off += n))), step()) };
                shaper.wait(mine);
                return;
              }
            }
            this.push(n === chunk.length ? chunk : chunk.subarray(off, off + n));
            off += n;
          }
          cb();
        };
        step();
      },
      destroy(err, cb) {
        if (mine) shaper.drop(mine);
        cb(err);
      },
    });
    t.once('close', () => this.active--);
    return t;
  }

  /** Bytes to read at a time under this budget: ~20 ms of it, from 16 KiB to 1 MiB. */
  get chunk(): number {
    return Math.min(1 << 20, Math.max(16 * 1024, Math.floor(this.rate / 50)));
  }

  /**
   * For senders that write their own chunks (the local file sender): spends
   * `n` bytes, undefined when granted at once, else a promise that resolves
   * once every slice of them was granted in its turn. `done()` ends the stream.
   */
  sender(): { chunk: number; spend: (n: number) => Promise<void> | undefined; done: () => void } | null {
    if (this.rate === 0) return null;
    this.active++;
    let open = true;
    return {
      chunk: this.chunk,
      spend: (n) => this.spend(n),
      done: () => {
        if (open) this.active--;
        open = false;
      },
    };
  }

  /**
   * Spends `n` bytes: undefined when granted at once (always without a budget), else a promise that
   * resolves once every slice of them was granted in its turn.
   */
  spend(n: number): Promise<void> | undefined {
    if (this.take(n)) return undefined;
    return new Promise((resolve) => {
      let left = n;
      const next = () => {
        while (left > 0) {
          const k = Math.min(left, this.slice);
          if (!this.take(k)) {
            this.wait({ n: k, grant: () => ((left -= k), next()) });
            return;
          }
          left -= k;
        }
        resolve();
      };
      next();
    });
  }

  /** What the admin status shows. */
  stats(): EgressStats {
    return {
      budget_bps: this.rate,
      current_bps: this.currentBps(),
      active_streams: this.active,
      waiting_streams: this.waiters.length,
      bytes_total: this.total,
    };
  }

  /** Average over the last WINDOW_S whole seconds. */
  currentBps(now = Date.now()): number {
    const sec = Math.floor(now / 1000);
    let sum = 0;
    for (let i = 0; i <= WINDOW_S; i++) {
      const s = this.stamps[i];
      if (s < sec && s >= sec - WINDOW_S) sum += this.buckets[i];
    }
    return Math.round(sum / WINDOW_S);
  }

  private count(n: number): void {
    this.total += n;
    const sec = Math.floor(Date.now() / 1000);
    const i = sec % (WINDOW_S + 1);
    if (this.stamps[i] !== sec) {
      this.stamps[i] = sec;
      this.buckets[i] = 0;
    }
    this.buckets[i] += n;
  }

  /**
   * Idle, the bucket holds one burst. Backlogged (called from `serve` with
   * streams waiting), a timer that fired late under a busy event loop must
   * not lose the budget it owed them, or a loaded machine sends less than
   * the budget it promises.
   */
  private refill(): void {
    const now = Date.now();
    if (now > this.last) {
      const cap = this.waiters.length ? this.owed : this.burst;
      this.tokens = Math.min(cap, this.tokens + ((now - this.last) * this.rate) / 1000);
      this.last = now;
    }
  }

  /** Takes `n` tokens when nobody waits ahead and they are there. */
  private take(n: number): boolean {
    if (this.rate === 0) return (this.count(n), true);
    if (this.waiters.length) return false;
    this.refill();
    if (this.tokens < n) return false;
    this.tokens -= n;
    this.count(n);
    return true;
  }

  private wait(w: Waiter): void {
    this.waiters.push(w);
    this.serve();
  }

  private drop(w: Waiter): void {
    const i = this.waiters.indexOf(w);
    if (i >= 0) this.waiters.splice(i, 1);
  }

  /** Grants the queue head while tokens last, then sleeps until the next head can be served. */
  private serve(): void {
    if (this.timer || this.serving || this.rate === 0) return;
    this.serving = true;
    try {
      this.refill();
      while (this.waiters.length && this.tokens >= this.waiters[0].n) {
        const w = this.waiters.shift()!;
        this.tokens -= w.n;
        this.count(w.n);
        w.grant(); // may queue its next slice at the tail: the round robin
      }
    } finally {
      this.serving = false;
    }
    if (!this.waiters.length) return;
    const ms = Math.max(2, Math.ceil(((this.waiters[0].n - this.tokens) * 1000) / this.rate));
    this.timer = setTimeout(() => {
      this.timer = null;
      this.serve();
    }, ms); // not unref'd: it exists only while some transfer waits for tokens
  }
}
