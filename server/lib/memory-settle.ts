/**
 * Gives memory back after a burst of load. Under load V8 grows its heap
 * (young generation to its maximum, old-space pages) and keeps it: the RSS of
 * a 200-client listing run stayed ~60 MB above its idle level long after the
 * clients left. When the request rate has dropped to a trickle after a busy
 * stretch, one full collection lets V8 compact and release those pages.
 * The collection runs at most once per quiet period, only when the heap grew
 * by more than SETTLE_GROWTH_BYTES since the last settled level.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

const CHECK_MS = 5_000;
/** Requests per check interval under which the service counts as quiet. */
const QUIET_REQUESTS = 20;
const SETTLE_GROWTH_BYTES = 16 << 20;

export class MemorySettle {
  private requests = 0;
  private busy = false;
  private baseline = process.memoryUsage().heapTotal;
  private timer: NodeJS.Timeout;
  private gc: (() => void) | null;
  /** Full collections run so far (for the status route). */
  settled = 0;

  constructor() {
    this.gc = exposeGc();
    this.timer = setInterval(() => this.check(), CHECK_MS);
    this.timer.unref();
  }

  /** Counts one request (call from a middleware). */
  hit(): void {
    this.requests++;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private check(): void {
    const n = this.requests;
    this.requests = 0;
    if (n >= QUIET_REQUESTS) {
      this.busy = true;
      return;
    }
    if (!this.busy) return;
    this.busy = false;
    if (this.gc && process.memoryUsage().heapTotal - this.baseline > SETTLE_GROWTH_BYTES) {
      this.gc();
      this.settled++;
    }
    this.baseline = process.memoryUsage().heapTotal;
  }
}

/** V8's `gc()` without starting Node with --expose-gc (null when the runtime refuses). */
function exposeGc(): (() => void) | null {
  try {
    setFlagsFromString('--expose-gc');
    return runInNewContext('gc') as () => void;
  } catch {
    return null;
  }
}
