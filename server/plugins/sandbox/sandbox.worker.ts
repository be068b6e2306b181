/**
 * One app's sandbox: a QuickJS runtime (WASM) in this worker thread. The app
 * sees no Node, no std/os modules, no timers: only `app` (where it puts its
 * functions), `host.call(method, args)` (answered by the main thread) and
 * `console.log`. The QuickJS module is loaded when the worker starts, so a
 * spare worker is warm before an app is given to it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import {
  newQuickJSWASMModule,
  newVariant,
  RELEASE_SYNC,
  type QuickJSContext,
  type QuickJSDeferredPromise,
  type QuickJSHandle,
  type QuickJSRuntime,
} from 'quickjs-emscripten';
import {
  byteLength,
  MAX_LOG_LINE,
  MAX_MESSAGE_BYTES,
  WASM_BASE_BYTES,
  type FromWorker,
  type SandboxLimits,
  type ToWorker,
  type WireError,
  type WorkerSetup,
} from './protocol';

const port = parentPort!;
const send = (m: FromWorker) => port.postMessage(m);
const setup = workerData as WorkerSetup;
const PAGE = 65_536;
/**
 * The memory cap is the WASM memory's maximum: QuickJS's own limit (`setMemoryLimit`) refuses only a single
 * allocation over it on this build (its accounting needs `malloc_usable_size`, which the WASM build lacks),
 * so many small allocations grew the heap to 2 GiB. Past the maximum a growth fails, malloc returns NULL and
 * QuickJS throws its out-of-memory error.
 */
const quickjs = newQuickJSWASMModule(
  newVariant(RELEASE_SYNC, {
    wasmMemory: new WebAssembly.Memory({ initial: WASM_BASE_BYTES / PAGE, maximum: Math.ceil((WASM_BASE_BYTES + setup.memory_bytes) / PAGE) }),
  }),
);

// Installed before the app's code; captured in closures so the app cannot unhook the dispatcher.
const PRELUDE = `
const hostCall = globalThis.__host, log = globalThis.__log;
delete globalThis.__host; delete globalThis.__log;
globalThis.app = {};
globalThis.host = Object.freeze({ call: (method, args) => hostCall(String(method), JSON.stringify(args === undefined ? null : args)).then((r) => JSON.parse(r)) });
globalThis.console = Object.freeze({ log: (...a) => log(a.map((x) => typeof x === 'string' ? x : JSON.stringify(x)).join(' ')) });
Object.defineProperty(globalThis, '__dispatch', { value: (fn, input) => {
  const f = globalThis.app && globalThis.app[fn];
  if (typeof f !== 'function') { const e = new Error(fn); e.code = 'unknown_function'; return Promise.reject(e); }
  return Promise.resolve().then(() => f(JSON.parse(input))).then((r) => JSON.stringify(r === undefined ? null : r));
} });
`;

let rt: QuickJSRuntime;
let ctx: QuickJSContext;
/** The CPU deadline the interrupt handler enforces (performance.now() clock). */
let deadline = Infinity;
let interrupted = false;
const hostWaits = new Map<number, QuickJSDeferredPromise>();
let nextHostId = 1;

interface Call {
  id: number;
  promise: QuickJSHandle;
  budget: number;
  used: number;
}
let current: Call | null = null;

/** Runs QuickJS against the call's remaining CPU budget; only time inside QuickJS counts. */
function timed<T>(budgetLeft: number, f: () => T): { value: T; elapsed: number } {
  const start = performance.now();
  deadline = start + budgetLeft;
  interrupted = false;
  try {
    return { value: f(), elapsed: performance.now() - start };
  } finally {
    deadline = Infinity;
  }
}

/** Codes an uncaught error keeps (set by the prelude or the host); anything else the app throws is `app_error`. */
const PASSED_ON = new Set(['unknown_function', 'unknown_method', 'too_large', 'host_error']);

/** The wire error for a QuickJS exception (a dumped value). */
function wireError(dumped: unknown): WireError {
  if (interrupted) return { error: 'timeout', message: 'the call ran out of CPU time' };
  const d = (dumped && typeof dumped === 'object' ? dumped : { message: String(dumped) }) as { name?: string; message?: string; code?: string };
  const message = String(d.message ?? d.name ?? 'error').slice(0, 4096);
  if (/out of memory/i.test(message)) return { error: 'out_of_memory', message: 'the app exceeded its memory limit' };
  if (d.code && PASSED_ON.has(d.code)) return { error: d.code, message };
  return { error: 'app_error', message };
}

function errorOf(h: QuickJSHandle): WireError {
  try {
    return wireError(ctx.dump(h));
  } catch {
    return wireError(null);
  } finally {
    h.dispose();
  }
}

/** The runtime, context and prelude, made while the worker is a spare (limits are applied at load). */
const prepared = quickjs.then((qjs) => {
  rt = qjs.newRuntime();
  rt.setInterruptHandler(() => (performance.now() > deadline ? (interrupted = true) : false));
  ctx = rt.newContext();
  ctx
    .newFunction('__host', (mh, ah) => {
      const method = ctx.getString(mh),
        args = ctx.getString(ah);
      const d = ctx.newPromise();
      if (!current || byteLength(args) > MAX_MESSAGE_BYTES) {
        const e = ctx.newError(current ? 'host call arguments too large' : 'host calls only during a call');
        ctx.newString(current ? 'too_large' : 'host_error').consume((c) => ctx.setProp(e, 'code', c));
        d.reject(e);
        e.dispose();
        return d.handle;
      }
      const id = nextHostId++;
      hostWaits.set(id, d);
      // Inside a timed stretch (always, as QuickJS runs only there): the budget less what it has left now.
      const used = Number.isFinite(deadline) ? current.budget - (deadline - performance.now()) : current.used;
      send({ kind: 'host', id, call: current.id, method, args, used });
      return d.handle;
    })
    .consume((f) => ctx.setProp(ctx.global, '__host', f));
  ctx
    .newFunction('__log', (lh) => {
      send({ kind: 'log', line: ctx.getString(lh).slice(0, MAX_LOG_LINE) });
    })
    .consume((f) => ctx.setProp(ctx.global, '__log', f));
  ctx.unwrapResult(ctx.evalCode(PRELUDE, 'prelude.js')).dispose();
});
prepared.catch(() => undefined); // reported by load(), which awaits it

function load(code: string, limits: SandboxLimits) {
  return prepared.then(() => {
    rt.setMemoryLimit(limits.memory_bytes);
    rt.setMaxStackSize(limits.stack_bytes);
    const r = timed(limits.load_timeout_ms, () => ctx.evalCode(code, 'code.js'));
    if (r.value.error) return send({ kind: 'load-failed', error: { ...errorOf(r.value.error), error: 'load_failed' } });
    r.value.value.dispose();
    send({ kind: 'ready' });
  });
}

/** Settles the current call if its promise is done, or fails it when nothing can move it any more. */
function settle(jobsFailed?: WireError) {
  const c = current!;
  const finish = (m: { result?: string; error?: WireError }) => {
    current = null;
    c.promise.dispose();
    send({ kind: 'result', id: c.id, ...m });
  };
  if (interrupted) return finish({ error: wireError(null) });
  if (jobsFailed) return finish({ error: jobsFailed });
  const state = ctx.getPromiseState(c.promise);
  if (state.type === 'pending') {
    if (hostWaits.size === 0) finish({ error: { error: 'app_error', message: 'the call never settled' } });
    return;
  }
  if (state.type === 'rejected') return finish({ error: errorOf(state.error) });
  const text = ctx.dump(state.value);
  state.value.dispose();
  if (typeof text !== 'string' || byteLength(text) > MAX_MESSAGE_BYTES) return finish({ error: { error: 'too_large', message: 'the result is too large' } });
  finish({ result: text });
}

/** Runs pending promise jobs under the call's budget, then settles. */
function pump() {
  const c = current!;
  const r = timed(c.budget - c.used, () => rt.executePendingJobs());
  c.used += r.elapsed;
  let failed: WireError | undefined;
  if (r.value.error) failed = errorOf(r.value.error);
  else r.value.dispose();
  settle(failed);
}

function call(id: number, fn: string, input: string, timeoutMs: number) {
  const c: Call = { id, budget: timeoutMs, used: 0, promise: undefined as unknown as QuickJSHandle };
  current = c;
  const r = timed(c.budget, () => {
    const dispatch = ctx.getProp(ctx.global, '__dispatch');
    const fnH = ctx.newString(fn),
      inH = ctx.newString(input);
    try {
      return ctx.callFunction(dispatch, ctx.undefined, fnH, inH);
    } finally {
      [dispatch, fnH, inH].forEach((h) => h.dispose());
    }
  });
  c.used += r.elapsed;
  if (r.value.error) {
    current = null;
    return send({ kind: 'result', id, error: errorOf(r.value.error) });
  }
  c.promise = r.value.value;
  pump();
}

function hostResult(id: number, result?: string, error?: WireError) {
  const d = hostWaits.get(id);
  if (!d || !current) return;
  hostWaits.delete(id);
  if (error) {
    const e = ctx.newError(error.message);
    ctx.newString(error.error).consume((c) => ctx.setProp(e, 'code', c));
    d.reject(e);
    e.dispose();
  } else {
    const v = ctx.newString(result ?? 'null');
    d.resolve(v);
    v.dispose();
  }
  d.dispose();
  pump();
}

port.on('message', (m: ToWorker) => {
  try {
    if (m.kind === 'load')
      void load(m.code, m.limits).catch((e) => send({ kind: 'load-failed', error: { error: 'load_failed', message: String(e?.message ?? e) } }));
    else if (m.kind === 'call') call(m.id, m.fn, m.input, m.timeout_ms);
    else if (m.kind === 'host-result') hostResult(m.id, m.result, m.error);
  } catch (e) {
    // A failure of the runtime itself (an allocation the host side could not make): report it; the main thread replaces us.
    const c = current;
    current = null;
    const msg = String((e as Error)?.message ?? e);
    const error: WireError = /out of memory|memory/i.test(msg)
      ? { error: 'out_of_memory', message: 'the app exceeded its memory limit' }
      : { error: 'crashed', message: msg.slice(0, 4096) };
    if (c) send({ kind: 'result', id: c.id, error });
    else if (m.kind === 'load') send({ kind: 'load-failed', error: { error: 'load_failed', message: error.message } });
  }
});
