/**
 * An abort signal that fires when a transfer makes no progress for `ms`.
 * Long transfers stay legal (each chunk re-arms the timer); a consumer that is
 * merely slow does not count as a stall when `consumerIsBehind` says so.
 */
export interface StallTimer {
  readonly signal: AbortSignal;
  /** True once the timer fired. */
  readonly fired: boolean;
  /** Records progress; re-arms the timer. */
  touch(): void;
  /** Disarms the timer for good. Idempotent. */
  stop(): void;
}

export function stallTimer(ms: number, consumerIsBehind: () => boolean = () => false): StallTimer {
  const ac = new AbortController();
  let fired = false;
  let stopped = false;
  const fire = () => {
    if (consumerIsBehind()) return void timer.refresh();
    fired = true;
    ac.abort(new Error(`no progress for ${ms / 1000}s`));
  };
  const timer = setTimeout(fire, ms);
  timer.unref();
  return {
    signal: ac.signal,
    get fired() {
      return fired;
    },
    touch: () => {
      // refresh() would re-arm a cleared timer.
      if (!stopped) timer.refresh();
    },
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
