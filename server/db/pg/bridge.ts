/**
 * A synchronous bridge to PostgreSQL (docs/postgresql.md, "the decision"):
 * the server's repositories call the database synchronously, so a worker
 * thread owns the connection and the main thread blocks on Atomics.wait for
 * each statement's answer. While it waits nothing else runs on the main
 * thread: a transaction made of bridge statements cannot interleave with
 * another, as with better-sqlite3.
 *
 * Bounded waits: the connection's `statement_timeout` cancels a slow
 * statement; a database that stops answering altogether is given up after
 * the statement timeout plus slack. Either loss opens the breaker: every
 * statement then fails at once with `database_busy` (503, Retry-After)
 * instead of blocking, until the worker, which reconnects on its own every
 * `retryMs`, reports the database back.
 */
import { MessageChannel, receiveMessageOnPort, type MessagePort, type Worker } from 'node:worker_threads';
import { startWorker } from '../../lib/worker';
import { busyError } from '../busy';
import { DatabaseUrlError, redactUrl } from './connect';

export interface BridgeOptions {
  url: string;
  /** The longest one statement may run (PostgreSQL cancels it), default 5 s. */
  statementTimeoutMs?: number;
  connectTimeoutMs?: number;
  /** Reconnect cadence while the database is away, default 1 s. */
  retryMs?: number;
}

export interface BridgeResult<R = Record<string, unknown>> {
  rows: R[];
  rowCount: number;
}

/** A statement PostgreSQL refused; `code` is its SQLSTATE (23505 unique violation, 57014 cancelled...). */
export class PgStatementError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
    readonly constraint: string | undefined,
  ) {
    super(message);
  }
}

/** How much longer than the statement timeout the main thread waits before it calls the database gone. */
const SLACK_MS = 1000;

export class PgBridge {
  private seq = 0;
  private up = false;
  private reason = '';
  private closed = false;

  private constructor(
    private worker: Worker,
    private answers: MessagePort,
    private flag: Int32Array,
    private waitMs: number,
  ) {
    worker.on('message', (m: { type: 'up' | 'down'; reason?: string }) => {
      this.up = m.type === 'up';
      if (m.reason) this.reason = m.reason;
    });
    worker.unref();
  }

  /** Starts the worker and waits for its first connection; throws DatabaseUrlError when it cannot be made. */
  static async open(o: BridgeOptions): Promise<PgBridge> {
    const statementTimeoutMs = o.statementTimeoutMs ?? 5000;
    const connectTimeoutMs = o.connectTimeoutMs ?? 10_000;
    const { port1, port2 } = new MessageChannel();
    const flag = new Int32Array(new SharedArrayBuffer(4));
    const bridge = new PgBridge(
      startWorker(new URL('./bridge.worker.ts', import.meta.url), {
        workerData: { url: o.url, statementTimeoutMs, connectTimeoutMs, retryMs: o.retryMs ?? 1000, flag, answers: port2 },
        transferList: [port2],
      }),
      port1,
      flag,
      statementTimeoutMs + SLACK_MS,
    );
    return bridge.firstConnection(o.url, connectTimeoutMs);
  }

  private firstConnection(url: string, timeoutMs: number): Promise<PgBridge> {
    return new Promise((resolve, reject) => {
      const fail = (why: string) => {
        clearTimeout(timer);
        void this.close();
        reject(new DatabaseUrlError(`cannot use the database ${redactUrl(url)}: ${why}`));
      };
      const timer = setTimeout(() => fail(this.reason || 'no answer (timed out)'), timeoutMs + SLACK_MS);
      const onMessage = (m: { type: string; reason?: string }) => {
        if (m.type === 'up') {
          clearTimeout(timer);
          this.worker.off('message', onMessage);
          resolve(this);
        } else if (m.reason) fail(m.reason); // the first attempt's verdict is the start's verdict
      };
      this.worker.on('message', onMessage);
      this.worker.once('error', (e) => fail(e.message));
    });
  }

  /** Whether statements are being sent (the breaker is closed). */
  get available(): boolean {
    return this.up && !this.closed;
  }

  /**
   * Runs one statement (`?` placeholders, as with SQLite) and returns its rows
   * (as arrays with `rowMode` 'array') and the number of rows it changed.
   * Blocks the calling thread until then.
   */
  query<R = Record<string, unknown>>(sql: string, params: unknown[] = [], rowMode?: 'array'): BridgeResult<R> {
    if (!this.available) throw busyError();
    const seq = ++this.seq;
    Atomics.store(this.flag, 0, 0);
    this.worker.postMessage({ type: 'query', seq, sql: toPositional(sql), params, rowMode });
    const deadline = Date.now() + this.waitMs;
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0 || Atomics.wait(this.flag, 0, 0, left) === 'timed-out') {
        // Nothing came back at all: the server or the network hangs. Stop sending until the worker reconnects.
        this.up = false;
        this.worker.postMessage({ type: 'reset' });
        throw busyError();
      }
      Atomics.store(this.flag, 0, 0);
      let m: Answer | undefined;
      while ((m = receiveMessageOnPort(this.answers)?.message as Answer | undefined)) {
        if (m.seq !== seq) continue; // a late answer to a statement given up earlier
        if (!m.error) return { rows: m.rows as R[], rowCount: m.rowCount };
        if (m.error.lost) {
          this.up = false;
          throw busyError();
        }
        throw new PgStatementError(m.error.message, m.error.code, m.error.constraint);
      }
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.answers.close();
    await this.worker.terminate();
  }
}

type Answer =
  | { seq: number; rows: unknown[]; rowCount: number; error?: undefined }
  | { seq: number; error: { message: string; code?: string; constraint?: string; lost: boolean } };

const positional = new Map<string, string>();

/** `?` placeholders (outside quotes and comments) as PostgreSQL's `$1, $2, ...`; cached per SQL text. */
export function toPositional(sql: string): string {
  let out = positional.get(sql);
  if (out !== undefined) return out;
  let n = 0;
  out = sql.replace(/'(?:[^']|'')*'|"(?:[^"]|"")*"|--[^\n]*|\?/g, (m) => (m === '?' ? `$${++n}` : m));
  if (positional.size >= 500) positional.clear();
  positional.set(sql, out);
  return out;
}

/** `@name` parameters as `?` with the names in order (better-sqlite3's named binding, as the repositories write it). */
export function namedToPositional(sql: string): { sql: string; names: string[] } | null {
  const names: string[] = [];
  const out = sql.replace(/'(?:[^']|'')*'|"(?:[^"]|"")*"|@([A-Za-z_]\w*)/g, (m, name: string | undefined) => {
    if (!name) return m;
    names.push(name);
    return '?';
  });
  return names.length ? { sql: out, names } : null;
}
