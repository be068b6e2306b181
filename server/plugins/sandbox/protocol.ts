/**
 * The message protocol between the main thread and an app's sandbox worker.
 * Everything crossing is JSON text (never structured clones of live objects),
 * and every JSON payload is bounded by MAX_MESSAGE_BYTES in both directions,
 * so an app can neither flood the main thread nor be flooded.
 *
 *   main → worker  {kind:'load', code, limits}            start the app
 *                  {kind:'call', id, fn, input, timeout_ms} run app[fn](input)
 *                  {kind:'host-result', id, result|error} answer a host call
 *   worker → main  {kind:'ready'} | {kind:'load-failed', error}
 *                  {kind:'host', id, call, method, args}  app called host.call
 *                  {kind:'result', id, result|error}      the call's answer
 *                  {kind:'log', line}                     console.log (bounded)
 * `input`, `args` and `result` are JSON strings; `error` is `{error, message}`.
 */

/** One JSON payload (call input, host args or result, call result). */
export const MAX_MESSAGE_BYTES = 1024 * 1024;
/** The manifest's call timeout is capped here (issue 21). */
export const MAX_CALL_TIMEOUT_MS = 30_000;
export const DEFAULT_CALL_TIMEOUT_MS = 5_000;
export const DEFAULT_MEMORY_BYTES = 64 * 1024 * 1024;
/**
 * What a worker's WASM memory holds besides the app's heap (QuickJS's static data, its stack, the
 * runtime and prelude): the module's own initial size. The memory may grow to this plus the cap.
 */
export const WASM_BASE_BYTES = 16 * 1024 * 1024;
/** Given to each sandbox worker: its memory cap is fixed when its WASM memory is made. */
export interface WorkerSetup {
  memory_bytes: number;
}
export const DEFAULT_STACK_BYTES = 512 * 1024;
/** One console line; more is cut. */
export const MAX_LOG_LINE = 2048;

export type SandboxErrorCode =
  | 'timeout' // the call's CPU budget ran out (or the wall watchdog fired)
  | 'out_of_memory' // the runtime's memory cap refused an allocation
  | 'app_error' // the app threw; `message` is its message
  | 'unknown_function' // app[fn] is not a function
  | 'too_large' // a payload over MAX_MESSAGE_BYTES
  | 'host_error' // a host method failed (its message is passed to the app)
  | 'crashed' // the worker died mid-call; it is replaced
  | 'stopped' // the sandbox was closed or killed
  | 'cancelled' // the caller aborted the call (a cancelled job)
  | 'load_failed'; // the app's code did not evaluate

export interface WireError {
  error: SandboxErrorCode | string;
  message: string;
}

export interface SandboxLimits {
  memory_bytes: number;
  stack_bytes: number;
  /** CPU budget for evaluating the code at load. */
  load_timeout_ms: number;
}

export type ToWorker =
  | { kind: 'load'; code: string; limits: SandboxLimits }
  | { kind: 'call'; id: number; fn: string; input: string; timeout_ms: number }
  | { kind: 'host-result'; id: number; result?: string; error?: WireError };

export type FromWorker =
  | { kind: 'ready' }
  | { kind: 'load-failed'; error: WireError }
  /** `used`: the call's time inside QuickJS so far, by the worker's count (the budget the sandbox enforces). */
  | { kind: 'host'; id: number; call: number; method: string; args: string; used: number }
  | { kind: 'result'; id: number; result?: string; error?: WireError }
  | { kind: 'log'; line: string };

export const byteLength = (s: string) => Buffer.byteLength(s, 'utf8');

/** JSON text of `v`, or null when it does not fit in one message. */
export function boundedJson(v: unknown): string | null {
  const s = JSON.stringify(v === undefined ? null : v);
  return byteLength(s) <= MAX_MESSAGE_BYTES ? s : null;
}

export const clampTimeout = (ms: number | undefined) => Math.max(1, Math.min(MAX_CALL_TIMEOUT_MS, Math.floor(ms ?? DEFAULT_CALL_TIMEOUT_MS)));
