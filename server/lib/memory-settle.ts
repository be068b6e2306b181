/**
 * Gives memory back after a burst of load. Under load V8 grows its heap
 * (young generation to its maximum, old-space pages) and keeps it: the RSS of
 * a 200-client listing run stayed ~60 MB above its idle level long after the
 * clients left. When the request rate has dropped to a trickle after a busy
 * stretch, one full collection lets V8 compact and release those pages.
 * The collection runs at most once per quiet period, only when the heap grew
 * by more than SETTLE_GROWTH_BYTES since the last settled level, or when
 * more than that was given up to the collector outside the heap (`released`:
 * the send buffers of downloads that ended; 100 slow readers leave ~200 MB
 * of them, which a quiet service would otherwise keep: nothing allocates
 * enough to start a collection).
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
  private releasedBytes = 0;
  private timer: NodeJS.Timeout;
  private gc: (() => void) | null;
  /** Full collections run so far (for the status route). */
  settled = 0;

  /** `released`: bytes given up to the collector since its last call (external memory only a collection returns). */
  constructor(private readonly released: () => number = () => 0) {
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
    this.releasedBytes += this.released();
    if (n >= QUIET_REQUESTS) {
      this.busy = true;
      return;
    }
    const wasBusy = this.busy;
    this.busy = false;
    const heapGrew = wasBusy && process.memoryUsage().heapTotal - this.baseline > SETTLE_GROWTH_BYTES;
    if (!heapGrew && this.releasedBytes <= SETTLE_GROWTH_BYTES) {
      if (wasBusy) this.baseline = process.memoryUsage().heapTotal;
      return;
    }
    this.releasedBytes = 0;
    if (this.gc) {
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
