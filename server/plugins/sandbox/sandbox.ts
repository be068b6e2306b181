/**
 * An app's sandbox as the main thread sees it: one worker thread per app
 * (a runaway or crashed app can only take its own worker down, and the WASM
 * heap it grew goes with it), started from a warm spare so a cold start is a
 * QuickJS runtime plus the app's code, not a thread plus a WASM compile.
 * Calls to one app run one at a time: the CPU budget is accounted per call,
 * which QuickJS cannot do for interleaved promise jobs.
 */
import type { Worker } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import { startWorker } from '../../lib/worker';
import { isAppError } from '../../errors';
import {
  boundedJson,
  clampTimeout,
  DEFAULT_MEMORY_BYTES,
  DEFAULT_STACK_BYTES,
  type FromWorker,
  type SandboxErrorCode,
  type SandboxLimits,
  type ToWorker,
  type WireError,
  type WorkerSetup,
} from './protocol';

/** What the app may call through `host.call(method, args)`, scoped to one call's caller. */
export type HostApi = Record<string, (args: unknown) => unknown>;

export class SandboxError extends Error {
  constructor(
    readonly code: SandboxErrorCode | string,
    message: string,
  ) {
    super(message);
    this.name = 'SandboxError';
  }
}

export interface SandboxOptions {
  code: string;
  limits?: Partial<SandboxLimits>;
  onLog?: (line: string) => void;
}

export interface CallOptions {
  host?: HostApi;
  /** The manifest's call timeout; capped at 30 s. */
  timeoutMs?: number;
  /** Aborting it stops the call (`cancelled`): a queued call never runs, a running one loses its worker. */
  signal?: AbortSignal;
}

/**
 * Wall-clock slack over the CPU budget before the worker itself is stopped (host waits excluded). Only a
 * worker that its interrupt handler could not stop meets it, so it can be generous: a loaded 2-core machine
 * (load 10, CI) starved a worker's next host call for over a second, and 1 s killed a call that had used
 * a few milliseconds of its 500.
 */
const WATCHDOG_GRACE_MS = 3000;
/** Errors after which the runtime is not trusted again: the worker is replaced. */
const POISONING = new Set(['timeout', 'out_of_memory', 'crashed']);

/** A warm worker and the memory cap its WASM memory was made for. */
let spare: { w: Worker; memory: number } | null = null;
const spawn = (memory: number) => {
  const workerData: WorkerSetup = { memory_bytes: memory };
  const w = startWorker(new URL('./sandbox.worker.ts', import.meta.url), { resourceLimits: { maxOldGenerationSizeMb: 64 }, workerData });
  w.unref();
  w.on('error', () => {}); // handled per sandbox once taken; a spare that dies is simply not used
  return w;
};
/** A warm worker for this cap (QuickJS already compiling); a new spare for the same cap is started behind it. */
function takeWorker(memory: number): Worker {
  const w = spare && spare.memory === memory && spare.w.threadId > 0 ? spare.w : spawn(memory);
  if (spare && spare.w !== w) void spare.w.terminate();
  spare = { w: spawn(memory), memory };
  return w;
}
/** Starts the spare early (at boot), so the first app's cold start finds it warm. */
export function warmSandboxes(memory = DEFAULT_MEMORY_BYTES) {
  spare ??= { w: spawn(memory), memory };
}
export async function stopSpare() {
  const w = spare?.w;
  spare = null;
  await w?.terminate();
}

interface Pending {
  id: number;
  resolve: (v: unknown) => void;
  reject: (e: SandboxError) => void;
  host: HostApi;
  timeoutMs: number;
  /**
   * Time outside host waits so far, and when the current stretch began (null while waiting for the host).
   * At each host call the worker's own count replaces the wall-clock sum: on a loaded machine the
   * messages' transit added seconds the app never ran, and the watchdog stopped calls within budget.
   */
  spent: number;
  since: number | null;
  hostWaits: number;
  timer?: NodeJS.Timeout;
}

export class AppSandbox {
  private worker: Worker | null = null;
  private starting: Promise<void> | null = null;
  private pending: Pending | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private nextId = 1;
  private closed = false;
  /** Milliseconds from taking a warm worker to the app's code evaluated, per start. */
  readonly startTimes: number[] = [];
  private constructor(private readonly opts: SandboxOptions) {}

  static async start(opts: SandboxOptions): Promise<AppSandbox> {
    const sb = new AppSandbox(opts);
    await sb.ensure();
    return sb;
  }

  private limits(): SandboxLimits {
    return {
      memory_bytes: this.opts.limits?.memory_bytes ?? DEFAULT_MEMORY_BYTES,
      stack_bytes: this.opts.limits?.stack_bytes ?? DEFAULT_STACK_BYTES,
      load_timeout_ms: clampTimeout(this.opts.limits?.load_timeout_ms),
    };
  }

  private ensure(): Promise<void> {
    if (this.closed) return Promise.reject(new SandboxError('stopped', 'the sandbox is closed'));
    if (this.worker) return Promise.resolve();
    return (this.starting ??= this.boot().finally(() => (this.starting = null)));
  }

  private boot(): Promise<void> {
    const t0 = performance.now();
    const w = takeWorker(this.limits().memory_bytes);
    return new Promise<void>((resolve, reject) => {
      const fail = (e: SandboxError) => {
        w.removeAllListeners('message');
        void w.terminate();
        reject(e);
      };
      w.on('message', (m: FromWorker) => {
        if (m.kind === 'ready') {
          this.startTimes.push(performance.now() - t0);
          w.removeAllListeners('message');
          // Closed while it was loading: nobody will use (or stop) this worker, so it goes now.
          if (this.closed) return fail(new SandboxError('stopped', 'the sandbox is closed'));
          this.adopt(w);
          resolve();
        } else if (m.kind === 'load-failed') fail(new SandboxError('load_failed', m.error.message));
      });
      w.once('exit', () => reject(new SandboxError('load_failed', 'the sandbox worker stopped while loading')));
      this.post(w, { kind: 'load', code: this.opts.code, limits: this.limits() });
    });
  }

  private adopt(w: Worker) {
    this.worker = w;
    w.on('message', (m: FromWorker) => this.onMessage(w, m));
    w.on('exit', () => {
      if (this.worker !== w) return;
      this.worker = null;
      this.fail(new SandboxError(this.closed ? 'stopped' : 'crashed', 'the app stopped unexpectedly'));
    });
  }

  private post(w: Worker, m: ToWorker) {
    w.postMessage(m);
  }

  /** Runs `app[fn](input)` in the sandbox; resolves with its JSON result. */
  call(fn: string, input: unknown, options: CallOptions = {}): Promise<unknown> {
    const run = () => this.run(fn, input, options);
    const p = this.queue.then(run, run);
    this.queue = p.catch(() => undefined);
    return p;
  }

  private async run(fn: string, input: unknown, options: CallOptions): Promise<unknown> {
    const text = boundedJson(input);
    if (text === null) throw new SandboxError('too_large', 'the call input is too large');
    if (typeof fn !== 'string' || !/^[A-Za-z_$][\w$]{0,127}$/.test(fn)) throw new SandboxError('unknown_function', String(fn));
    const signal = options.signal;
    const cancelled = () => new SandboxError('cancelled', 'the call was cancelled');
    if (signal?.aborted) throw cancelled();
    await this.ensure();
    if (signal?.aborted) throw cancelled();
    const w = this.worker!;
    return new Promise((resolve, reject) => {
      const p: Pending = {
        id: this.nextId++,
        resolve,
        reject,
        host: options.host ?? {},
        timeoutMs: clampTimeout(options.timeoutMs),
        spent: 0,
        since: performance.now(),
        hostWaits: 0,
      };
      this.pending = p;
      this.arm(p);
      if (signal) {
        const stop = () => {
          if (this.pending !== p) return;
          this.fail(cancelled());
          this.replace();
        };
        signal.addEventListener('abort', stop, { once: true });
        const done = () => signal.removeEventListener('abort', stop);
        p.resolve = ((v: unknown) => (done(), resolve(v))) as Pending['resolve'];
        p.reject = (e) => (done(), reject(e));
      }
      this.post(w, { kind: 'call', id: p.id, fn, input: text, timeout_ms: p.timeoutMs });
    });
  }

  /** The watchdog: fires only if the worker did not stop the call itself (the interrupt handler is the normal path). */
  private arm(p: Pending) {
    clearTimeout(p.timer);
    const left = p.timeoutMs + WATCHDOG_GRACE_MS - p.spent;
    p.timer = setTimeout(
      () => {
        if (this.pending !== p) return;
        this.fail(new SandboxError('timeout', 'the call ran out of time'));
        this.replace();
      },
      Math.max(0, left),
    );
    p.timer.unref();
  }

  private onMessage(w: Worker, m: FromWorker) {
    const p = this.pending;
    if (m.kind === 'log') return this.opts.onLog?.(m.line);
    if (m.kind === 'result') {
      if (!p || p.id !== m.id) return;
      this.pending = null;
      clearTimeout(p.timer);
      if (m.error) {
        p.reject(new SandboxError(m.error.error, m.error.message));
        if (POISONING.has(m.error.error)) this.replace();
      } else p.resolve(JSON.parse(m.result ?? 'null'));
      return;
    }
    if (m.kind === 'host' && p && p.id === m.call) void this.answerHost(w, p, m.id, m.method, m.args, m.used);
  }

  private async answerHost(w: Worker, p: Pending, id: number, method: string, args: string, used: number) {
    if (p.hostWaits++ === 0 && p.since !== null) {
      p.spent = used;
      p.since = null;
      clearTimeout(p.timer);
    }
    let reply: { result?: string; error?: WireError };
    try {
      if (!Object.hasOwn(p.host, method)) throw new SandboxError('unknown_method', `no host method ${method}`);
      const text = boundedJson(await p.host[method](JSON.parse(args)));
      reply = text === null ? { error: { error: 'too_large', message: 'the host result is too large' } } : { result: text };
    } catch (e) {
      // Host failures reach the app by code; only spec errors and our own carry their message (no internals leak).
      reply = {
        error:
          e instanceof SandboxError
            ? { error: e.code, message: e.message }
            : isAppError(e)
              ? { error: e.code, message: e.code }
              : { error: 'host_error', message: 'the host call failed' },
      };
    }
    if (this.pending !== p || this.worker !== w) return;
    if (--p.hostWaits === 0) {
      p.since = performance.now();
      this.arm(p);
    }
    this.post(w, { kind: 'host-result', id, ...reply });
  }

  private fail(e: SandboxError) {
    const p = this.pending;
    if (!p) return;
    this.pending = null;
    clearTimeout(p.timer);
    p.reject(e);
  }

  /** Drops the current worker and starts the next one now, so the app's next call finds it ready. */
  private replace() {
    const w = this.worker;
    this.worker = null;
    void w?.terminate();
    if (!this.closed) this.ensure().catch(() => undefined);
  }

  /** Stops the app's worker now (an admin stop, or a worker judged stuck); a call in flight fails with `crashed`. */
  kill() {
    const w = this.worker;
    this.worker = null;
    void w?.terminate();
    this.fail(new SandboxError('crashed', 'the app was stopped'));
    if (!this.closed) this.ensure().catch(() => undefined);
  }

  async close() {
    this.closed = true;
    const w = this.worker;
    this.worker = null;
    this.fail(new SandboxError('stopped', 'the sandbox is closed'));
    await w?.terminate();
  }
}
