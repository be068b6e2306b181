/**
 * Event-loop delay over a recent window (perf_hooks.monitorEventLoopDelay):
 * how long a ready callback waited for the main thread. The histogram is
 * rotated every `windowMs`; a snapshot reports the last complete window, or
 * the current one while none has completed, so a spike shows for a while and
 * then ages out.
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

export interface LoopDelay {
  /** Percentiles and maximum in ms, over `window_s` seconds. */
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  window_s: number;
}

export class LoopDelayMonitor {
  private h: IntervalHistogram;
  private last: LoopDelay | null = null;
  private timer: NodeJS.Timeout;
  private since = Date.now();

  /** Starts sampling at `resolutionMs` (10 ms: finer costs CPU for nothing at this scale). */
  constructor(
    private windowMs = 10_000,
    private resolutionMs = 10,
  ) {
    this.h = monitorEventLoopDelay({ resolution: resolutionMs });
    this.h.enable();
    this.timer = setInterval(() => {
      this.last = this.read();
      this.h.reset();
      this.since = Date.now();
    }, windowMs);
    this.timer.unref();
  }

  /** The last complete window (or the running one before the first completes). */
  snapshot(): LoopDelay {
    return this.last ?? this.read();
  }

  stop(): void {
    clearInterval(this.timer);
    this.h.disable();
  }

  private read(): LoopDelay {
    // The histogram holds the time between samples, the resolution included: the delay is the excess.
    const ms = (ns: number) => Math.max(0, Math.round((ns / 1e6 - this.resolutionMs) * 100) / 100);
    // An empty histogram reports huge sentinel values: no sample yet means no delay seen.
    const n = this.h.count;
    return {
      p50_ms: n ? ms(this.h.percentile(50)) : 0,
      p99_ms: n ? ms(this.h.percentile(99)) : 0,
      max_ms: n ? ms(this.h.max) : 0,
      window_s: Math.round(Math.max(this.windowMs, Date.now() - this.since) / 1000),
    };
  }
}
