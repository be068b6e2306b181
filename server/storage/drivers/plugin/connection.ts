/**
 * One running plugin process: line-framed JSON-RPC over its stdio, request
 * deadlines, and body streams with credit-based flow control in both
 * directions. When the process exits, every pending call and open stream fails
 * with `storage_unreachable`; the connection is then dead for good (the driver
 * starts a new one).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname } from 'node:path';
import { Readable } from 'node:stream';
import { AppError, isAppError, type ErrorCode } from '../../../errors';
import { CHUNK_BYTES, MAX_LINE_BYTES, METHOD_NOT_FOUND, PLUGIN_ERROR_CODES, WINDOW_BYTES, type RpcError, type RpcMessage } from './protocol';

export interface CallOptions {
  /** The call fails when nothing happens on it (reply, body chunk, ack, consumer read) for this long. */
  idleMs: number;
  signal?: AbortSignal;
}

interface Pending {
  resolve(result: unknown): void;
  reject(err: AppError): void;
  timer: NodeJS.Timeout;
  idleMs: number;
  /** Incoming body of a `read`, fed by `onChunk`. */
  incoming?: Readable;
  onChunk?(buf: Buffer): void;
  /** True once the plugin replied; before that a failure reaches the caller as a rejection, not a stream error. */
  opened: boolean;
  /** Batches of a `list`/`walk` sent ahead of the reply as `entries` notifications. */
  onEntries?(entries: unknown[]): void;
  /** Removes the abort listener. */
  detach(): void;
  /** Credit granted by the plugin to our outgoing body of a `write`. */
  onAck?(bytes: number): void;
}

const unreachable = (reason: string) => new AppError('storage_unreachable', { reason }, { reason });

/** How a plugin program is started: `.js`/`.mjs`/`.cjs` with this Node, anything else as an executable. */
export function spawnPlugin(program: string): ChildProcess {
  const viaNode = /\.(c|m)?js$/.test(program);
  return spawn(viaNode ? process.execPath : program, viaNode ? [program] : [], {
    cwd: dirname(program),
    stdio: ['pipe', 'pipe', 'pipe'],
    // Plugins get no share of the service's environment (secrets live there).
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: process.env.LANG ?? 'C.UTF-8', TZ: process.env.TZ ?? 'UTC' },
  });
}

/** The AppError a JSON-RPC error stands for. */
export function fromRpcError(e: RpcError): AppError {
  if (e.code === METHOD_NOT_FOUND) return new AppError('unsupported', { reason: e.message });
  const code = e.data?.code as ErrorCode | undefined;
  if (code && PLUGIN_ERROR_CODES.has(code)) {
    const params = Object.fromEntries(Object.entries(e.data?.params ?? {}).filter(([, v]) => ['string', 'number', 'boolean'].includes(typeof v))) as Record<
      string,
      string
    >;
    return new AppError(code, params, undefined, e.message);
  }
  return unreachable(e.message || 'plugin error');
}

export class PluginConnection {
  private readonly child: ChildProcess;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private buffered = '';
  private deadReason: string | null = null;
  private stderrTail = '';
  /** Resolves when the process has exited. */
  readonly exited: Promise<void>;

  constructor(program: string) {
    this.child = spawnPlugin(program);
    this.exited = new Promise((resolve) => this.child.once('close', () => resolve()));
    this.child.once('error', (e) => this.die(`plugin could not start: ${e.message}`));
    this.child.once('exit', (code, sig) => this.die(`plugin exited (${sig ?? code})${this.stderrTail ? `: ${this.stderrTail}` : ''}`));
    this.child.stdin!.on('error', () => undefined);
    this.child.stderr!.setEncoding('utf8');
    this.child.stderr!.on('data', (s: string) => (this.stderrTail = (this.stderrTail + s).slice(-500).trim()));
    this.child.stdout!.setEncoding('utf8');
    this.child.stdout!.on('data', (s: string) => this.onData(s));
  }

  get alive(): boolean {
    return this.deadReason === null;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Sends a request and resolves with its result. Rejects with the plugin's mapped error, on a stall, on abort or on exit. */
  call<T>(method: string, params: Record<string, unknown>, opts: CallOptions): Promise<T> {
    return this.request<T>(method, params, opts).promise;
  }

  /**
   * A `list` or `walk`: the plugin may send `entries {id, entries}` batches
   * before its reply (which may carry the last batch); resolves with them all.
   */
  async entries<T>(method: 'list' | 'walk', params: Record<string, unknown>, opts: CallOptions): Promise<T[]> {
    const got: T[] = [];
    const req = this.request<{ entries?: T[] }>(method, params, opts, (p) => {
      p.onEntries = (batch) => got.push(...(batch as T[]));
    });
    const last = await req.promise;
    if (Array.isArray(last?.entries)) got.push(...last.entries);
    return got;
  }

  /**
   * A `read`: resolves with the body once the plugin has accepted the call.
   * Chunks are acknowledged as the consumer pulls them, so a slow consumer
   * slows the plugin instead of filling memory.
   */
  async read(params: Record<string, unknown>, opts: CallOptions): Promise<Readable> {
    let unacked = 0;
    let id = 0;
    const ack = () => {
      if (unacked === 0) return;
      this.notify('body.ack', { id, bytes: unacked });
      unacked = 0;
    };
    const incoming = new Readable({
      highWaterMark: WINDOW_BYTES,
      read: () => {
        this.touch(id);
        ack();
      },
      destroy: (err, cb) => {
        if (this.pending.has(id)) {
          this.settle(id);
          this.notify('cancel', { id });
        }
        cb(err);
      },
    });
    const req = this.request<unknown>('read', params, opts, (p) => {
      p.incoming = incoming;
      p.onChunk = (buf) => {
        unacked += buf.length;
        // Bytes the consumer has not pulled yet stay unacknowledged until `read()` asks for more.
        if (incoming.push(buf)) ack();
      };
    });
    id = req.id;
    await req.opened;
    return incoming;
  }

  /**
   * A `write`: streams `body` as chunks within the plugin's credit window,
   * then `body.end`; resolves with the plugin's final result. A body error is
   * sent as `body.error` so the plugin discards its temp file.
   */
  write<T>(params: Record<string, unknown>, body: Readable, opts: CallOptions): Promise<T> {
    let credit = WINDOW_BYTES;
    let waiting = false;
    const req = this.request<T>('write', params, opts, (p) => {
      p.onAck = (bytes) => {
        credit += bytes;
        if (waiting && credit > 0) {
          waiting = false;
          body.resume();
        }
      };
    });
    const id = req.id;
    const onData = (c: Buffer | string) => {
      const buf = typeof c === 'string' ? Buffer.from(c) : c;
      for (let at = 0; at < buf.length; at += CHUNK_BYTES) {
        const piece = buf.subarray(at, at + CHUNK_BYTES);
        credit -= piece.length;
        this.notify('body.chunk', { id, data: piece.toString('base64') });
      }
      this.touch(id);
      if (credit <= 0) {
        waiting = true;
        body.pause();
      }
    };
    const onEnd = () => this.notify('body.end', { id });
    const onError = (e: Error) => {
      this.notify('body.error', { id, error: { code: 'cancelled', message: e.message } });
      this.fail(id, isAppError(e) ? e : new AppError('cancelled', {}, undefined, e.message));
    };
    body.on('data', onData);
    body.once('end', onEnd);
    body.once('error', onError);
    const detach = () => {
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('error', onError);
    };
    return req.promise.finally(detach);
  }

  /** Asks the plugin to exit, and kills it if it has not after `graceMs`. Idempotent. */
  async shutdown(graceMs = 2000): Promise<void> {
    if (this.alive) {
      this.call('shutdown', {}, { idleMs: graceMs }).catch(() => undefined);
      this.child.stdin!.end();
    }
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  private request<T>(method: string, params: Record<string, unknown>, opts: CallOptions, init?: (p: Pending) => void) {
    const id = this.nextId++;
    let opened!: () => void;
    const openedP = new Promise<void>((resolve) => (opened = resolve));
    const promise = new Promise<T>((resolve, reject) => {
      if (this.deadReason) return reject(unreachable(this.deadReason));
      if (opts.signal?.aborted) return reject(new AppError('cancelled'));
      const onAbort = () => {
        this.notify('cancel', { id });
        this.fail(id, new AppError('cancelled'));
      };
      const p: Pending = {
        opened: false,
        resolve: (r) => {
          p.opened = true;
          opened();
          resolve(r as T);
        },
        reject,
        idleMs: opts.idleMs,
        timer: setTimeout(() => this.timeout(id), opts.idleMs),
        detach: () => opts.signal?.removeEventListener('abort', onAbort),
      };
      init?.(p);
      this.pending.set(id, p);
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      this.send({ jsonrpc: '2.0', id, method, params });
    });
    // A rejection reaches callers through `promise`; `opened` only orders the read.
    const openedOrFailed = Promise.race([openedP, promise.then(() => undefined)]);
    // Only `read` awaits `opened`; for other calls its rejection is the same one `promise` carries.
    openedOrFailed.catch(() => undefined);
    return { id, promise, opened: openedOrFailed };
  }

  private timeout(id: number): void {
    this.notify('cancel', { id });
    this.fail(id, unreachable('plugin call timed out'));
  }

  /** Re-arms a call's stall timer: something moved on it. */
  private touch(id: number): void {
    const p = this.pending.get(id);
    if (!p) return;
    clearTimeout(p.timer);
    p.timer = setTimeout(() => this.timeout(id), p.idleMs);
  }

  private fail(id: number, err: AppError): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.settle(id);
    p.reject(err);
    p.incoming?.destroy(p.opened ? err : undefined);
  }

  private settle(id: number): void {
    const p = this.pending.get(id);
    if (!p) return;
    clearTimeout(p.timer);
    p.detach();
    this.pending.delete(id);
  }

  private send(msg: RpcMessage): void {
    if (this.deadReason) return;
    this.child.stdin!.write(`${JSON.stringify(msg)}\n`);
  }

  private notify(method: string, params: Record<string, unknown>): void {
    this.send({ jsonrpc: '2.0', method, params });
  }

  private onData(s: string): void {
    this.buffered += s;
    if (this.buffered.length > MAX_LINE_BYTES && !this.buffered.includes('\n')) return this.violation('line too long');
    let nl: number;
    while ((nl = this.buffered.indexOf('\n')) >= 0) {
      const line = this.buffered.slice(0, nl);
      this.buffered = this.buffered.slice(nl + 1);
      if (line.length > MAX_LINE_BYTES) return this.violation('line too long');
      if (line.trim() === '') continue;
      let msg: RpcMessage;
      try {
        msg = JSON.parse(line) as RpcMessage;
      } catch {
        return this.violation('not JSON on stdout');
      }
      this.dispatch(msg);
    }
  }

  private dispatch(msg: RpcMessage): void {
    if (typeof msg.id === 'number' && !msg.method) {
      const p = this.pending.get(msg.id);
      if (!p) return;
      if (msg.error) return this.fail(msg.id, fromRpcError(msg.error));
      if (p.incoming) {
        // A read stays pending (for its stall timer) until body.end.
        this.touch(msg.id);
        p.resolve(msg.result);
        return;
      }
      this.settle(msg.id);
      p.resolve(msg.result);
      return;
    }
    const params = msg.params ?? {};
    const id = Number(params.id);
    const p = this.pending.get(id);
    if (!p) return;
    switch (msg.method) {
      case 'body.chunk':
        if (!p.incoming || typeof params.data !== 'string') return this.violation('unexpected body.chunk');
        this.touch(id);
        p.onChunk?.(Buffer.from(params.data, 'base64'));
        return;
      case 'body.end':
        if (!p.incoming) return this.violation('unexpected body.end');
        this.settle(id);
        p.incoming.push(null);
        return;
      case 'body.error': {
        const e = (params.error ?? {}) as { code?: string; message?: string; params?: Record<string, unknown> };
        return this.fail(id, fromRpcError({ code: -32000, message: e.message ?? 'plugin body error', data: e }));
      }
      case 'entries':
        if (!p.onEntries || !Array.isArray(params.entries)) return this.violation('unexpected entries');
        this.touch(id);
        p.onEntries(params.entries);
        return;
      case 'body.ack':
        this.touch(id);
        p.onAck?.(Number(params.bytes) || 0);
        return;
      default:
        return undefined;
    }
  }

  private violation(what: string): void {
    this.die(`plugin broke the protocol: ${what}`);
    this.child.kill('SIGKILL');
  }

  private die(reason: string): void {
    if (this.deadReason) return;
    this.deadReason = reason;
    const err = unreachable(reason);
    for (const id of [...this.pending.keys()]) this.fail(id, err);
  }
}
