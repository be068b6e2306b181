/**
 * Bounds every provider call: no first byte, or no event for `timeout_ms`
 * between two events, ends it with `assistant_timeout`; the caller's own
 * abort ends it with `cancelled`. The bound does not trust the SDK to honour
 * its AbortSignal (both SDKs end a stream silently when aborted): each wait is
 * raced against the timer, so a stream that never ends cannot hang the caller.
 */
import { AppError, isAppError } from '../../errors';
import { providerError } from './errors';
import type { ProviderEvent } from './types';

/** 120 s, the spec's provider timeout: also what a missing or non-positive setting means. */
export const DEFAULT_PROVIDER_TIMEOUT_MS = 120_000;
export const timeoutOf = (ms: number): number => (Number.isFinite(ms) && ms > 0 ? ms : DEFAULT_PROVIDER_TIMEOUT_MS);

export interface Bound {
  provider: string;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Turns an SDK or network error into an AppError (see errors.ts). */
  mapError: (e: unknown) => AppError;
}

class Deadline {
  readonly ctrl = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private fail!: (e: unknown) => void;
  private outcome: 'timeout' | 'cancelled' | undefined;
  /** Rejects once the timer fires or the caller aborts; never resolves. */
  readonly expired = new Promise<never>((_, reject) => (this.fail = reject));
  private readonly onAbort = () => this.end('cancelled');

  constructor(private readonly b: Bound) {
    this.expired.catch(() => undefined);
    if (b.signal?.aborted) this.end('cancelled');
    else b.signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  arm(): void {
    this.pause();
    if (!this.outcome) this.timer = setTimeout(() => this.end('timeout'), timeoutOf(this.b.timeoutMs));
  }
  pause(): void {
    clearTimeout(this.timer);
  }
  private end(outcome: 'timeout' | 'cancelled'): void {
    if (this.outcome) return;
    this.outcome = outcome;
    this.pause();
    this.ctrl.abort();
    this.fail(this.error());
  }
  /** The error to throw: the deadline's own outcome wins over whatever the aborted SDK threw. */
  error(e?: unknown): AppError {
    if (this.outcome === 'timeout') return providerError('assistant_timeout', this.b.provider, `no answer within ${timeoutOf(this.b.timeoutMs)} ms`);
    if (this.outcome === 'cancelled') return new AppError('cancelled');
    return isAppError(e) ? e : this.b.mapError(e);
  }
  get over(): boolean {
    return this.outcome !== undefined;
  }
  dispose(): void {
    this.pause();
    this.b.signal?.removeEventListener('abort', this.onAbort);
    this.ctrl.abort();
  }
}

/** One bounded request (a models listing). */
export async function boundCall<T>(b: Bound, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const d = new Deadline(b);
  try {
    d.arm();
    const call = fn(d.ctrl.signal);
    call.catch(() => undefined); // a late failure after the deadline won has nobody to hear it
    return await Promise.race([call, d.expired]);
  } catch (e) {
    throw d.error(e);
  } finally {
    d.dispose();
  }
}

/**
 * One bounded model turn. The timer runs only while waiting on the provider,
 * never while the consumer holds an event (a slow reader is not a stalled provider).
 */
export async function* boundStream(b: Bound, run: (signal: AbortSignal) => AsyncIterable<ProviderEvent>): AsyncGenerator<ProviderEvent> {
  const d = new Deadline(b);
  let it: AsyncIterator<ProviderEvent> | undefined;
  try {
    d.arm();
    it = run(d.ctrl.signal)[Symbol.asyncIterator]();
    for (;;) {
      let r: IteratorResult<ProviderEvent>;
      try {
        const next = it.next();
        next.catch(() => undefined); // as in boundCall
        r = await Promise.race([next, d.expired]);
      } catch (e) {
        throw d.error(e);
      }
      if (r.done) break;
      d.pause();
      yield r.value;
      d.arm();
    }
    // An aborted SDK stream ends quietly: that end is the timeout's or the caller's, not the provider's.
    if (d.over) throw d.error();
  } finally {
    d.dispose();
    // Lets the adapter's generator run its own cleanup; its late error has nobody left to hear it.
    it?.return?.().catch(() => undefined);
  }
}
