/**
 * A storage driver served by a plugin process. The process is started on the
 * first call (handshake, then `open` with the storage's config) and restarted
 * on the next call after it dies, with exponential backoff; calls in flight
 * when it dies fail with `storage_unreachable`.
 */
import type { Readable } from 'node:stream';
import { AppError } from '../../../errors';
import type { ByteRange, Entry, StorageDriver, WalkEntry, WriteOptions } from '../../types';
import { PluginConnection } from './connection';
import { handshake } from './handshake';

export interface PluginTimeouts {
  /** Stall limit of one call: no reply or body progress for this long fails it. */
  callMs: number;
  /** Bound of handshake + open on a (re)start. */
  startMs: number;
  /** First restart delay after a crash; doubles per crash up to `maxBackoffMs`. */
  backoffMs: number;
  maxBackoffMs: number;
}

export const DEFAULT_PLUGIN_TIMEOUTS: PluginTimeouts = { callMs: 30_000, startMs: 10_000, backoffMs: 250, maxBackoffMs: 30_000 };

/** A process that lived this long before dying counts as a fresh start, not a crash loop. */
const STABLE_MS = 60_000;

export interface PluginTarget {
  program: string;
  /** The plugin's name from the first handshake; a restarted process must still be it. */
  name: string;
  serviceVersion: string;
  config: Record<string, unknown>;
  stateDir: string;
  timeouts: PluginTimeouts;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class PluginDriver implements StorageDriver {
  private conn: PluginConnection | null = null;
  private starting: Promise<PluginConnection> | null = null;
  private crashes = 0;
  private startedAt = 0;
  private closed = false;

  constructor(private readonly t: PluginTarget) {}

  /** Metadata of one path; '' is the root. Missing → `not_found`. */
  async stat(path: string): Promise<Entry> {
    return this.call<Entry>('stat', { path });
  }

  /** Children of a folder. Missing folder or a file → `not_found`. */
  async *list(dir: string): AsyncIterable<Entry> {
    const conn = await this.connection();
    yield* await conn.entries<Entry>('list', { path: dir }, { idleMs: this.t.timeouts.callMs });
  }

  /** The file's bytes or `range` of them, streamed with flow control. Missing → `not_found`. */
  async read(path: string, range?: ByteRange, signal?: AbortSignal): Promise<Readable> {
    const conn = await this.connection();
    return conn.read({ path, ...(range ? { range } : {}) }, { idleMs: this.t.timeouts.callMs, signal });
  }

  /** Atomic in the plugin (the protocol requires temp + rename); a body error makes it discard its temp file. */
  async write(path: string, body: Readable, opts: WriteOptions = {}): Promise<Entry> {
    const conn = await this.connection();
    const params = {
      path,
      overwrite: opts.overwrite ?? true,
      ...(opts.size !== undefined ? { size: opts.size } : {}),
      ...(opts.mime ? { mime: opts.mime } : {}),
    };
    return conn.write<Entry>(params, body, { idleMs: this.t.timeouts.callMs, signal: opts.signal });
  }

  /** Creates the folder and missing parents. Idempotent. */
  async mkdir(path: string): Promise<void> {
    await this.call('mkdir', { path });
  }

  /** Deletes a file or folder tree. Missing → `not_found`. */
  async delete(path: string): Promise<void> {
    await this.call('delete', { path });
  }

  /** Stops the process. Idempotent; later calls fail with `storage_unreachable`. */
  async close(): Promise<void> {
    this.closed = true;
    const conn = this.conn;
    this.conn = null;
    await conn?.shutdown();
  }

  /** Flat listing below `prefix`, paths relative to it. */
  async *walk(prefix: string, signal?: AbortSignal): AsyncIterable<WalkEntry> {
    const conn = await this.connection();
    yield* await conn.entries<WalkEntry>('walk', { path: prefix }, { idleMs: this.t.timeouts.callMs, signal });
  }

  /** Server-side move. Target exists and !overwrite → `conflict`. */
  async move(from: string, to: string, opts: { overwrite: boolean }): Promise<void> {
    await this.call('move', { from, to, overwrite: opts.overwrite });
  }

  /** Server-side copy. Target exists and !overwrite → `conflict`. */
  async copy(from: string, to: string, opts: { overwrite: boolean; signal?: AbortSignal }): Promise<void> {
    await this.call('copy', { from, to, overwrite: opts.overwrite }, opts.signal);
  }

  /** Process id of the running plugin, if any (diagnostics and tests). */
  get pid(): number | undefined {
    return this.conn?.alive ? this.conn.pid : undefined;
  }

  private async call<T>(method: string, params: Record<string, unknown>, signal?: AbortSignal): Promise<T> {
    const conn = await this.connection();
    return conn.call<T>(method, params, { idleMs: this.t.timeouts.callMs, signal });
  }

  /** The live connection, starting (or restarting after the backoff) when there is none. */
  private connection(): Promise<PluginConnection> {
    if (this.closed) return Promise.reject(new AppError('storage_unreachable', { reason: 'driver closed' }));
    if (this.conn?.alive) return Promise.resolve(this.conn);
    this.starting ??= this.start().finally(() => (this.starting = null));
    return this.starting;
  }

  private async start(): Promise<PluginConnection> {
    if (this.conn) {
      // The previous process died: a quick death counts towards the backoff.
      this.crashes = Date.now() - this.startedAt > STABLE_MS ? 1 : this.crashes + 1;
      this.conn = null;
    }
    if (this.crashes > 0) await sleep(Math.min(this.t.timeouts.backoffMs * 2 ** (this.crashes - 1), this.t.timeouts.maxBackoffMs));
    this.startedAt = Date.now();
    const conn = new PluginConnection(this.t.program);
    this.conn = conn;
    try {
      const hs = await handshake(conn, this.t.serviceVersion, this.t.timeouts.startMs);
      if (hs.name !== this.t.name) throw new AppError('unsupported', { reason: 'plugin name changed', plugin: hs.name });
      await conn.call('open', { config: this.t.config, state_dir: this.t.stateDir }, { idleMs: this.t.timeouts.startMs });
      return conn;
    } catch (e) {
      await conn.shutdown(500);
      throw e;
    }
  }
}
