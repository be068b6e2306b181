/**
 * StorageDriver over WebDAV (RFC 4918) with the `webdav` client. Every request
 * carries a timeout (a fixed one for metadata calls, a stall timer for
 * transfers); writes go to a hidden temp name in the target folder and are
 * published with MOVE, so readers never see a half-written file.
 */
import http from 'node:http';
import https from 'node:https';
import type { TLSSocket } from 'node:tls';
import { PassThrough, type Readable } from 'node:stream';
import { AuthType, createClient, type FileStat, type WebDAVClient } from 'webdav';
import { AppError } from '../../../errors';
import { randomToken } from '../../../lib/crypto';
import { baseName, parentRel, TEMP_PREFIX } from '../../../lib/paths';
import type { ByteRange, Entry, StorageDriver, WriteOptions } from '../../types';
import type { WebdavConfig } from './config';
import { davError, releaseBody, statusOf } from './errors';
import { errorCode } from '../remote/errors';
import { enforcePin, tlsConnectOptions, type TlsTrust } from '../remote/options';
import { stallTimer } from './stall-timer';
import { countBytes } from '../remote/streams';
import { pipeFrom, takeBytes } from '../../../lib/streams';

/** Server-side MOVE/COPY/DELETE of a whole tree may take this many timeouts. */
const LONG_CALL_FACTOR = 10;
/** Read buffer: bigger chunks are the first lever of download speed (RECIPES). */
const READ_HIGH_WATER_MARK = 1024 * 1024;

export class WebdavStorage implements StorageDriver {
  private readonly agent: http.Agent;
  private readonly client: WebDAVClient;
  private rootReady: Promise<void> | null = null;

  constructor(private readonly cfg: WebdavConfig) {
    this.agent = createAgent(cfg.url, cfg.trust);
    this.client = createClient(cfg.url, {
      username: cfg.username,
      password: cfg.password,
      // Basic first, digest when the server asks for it.
      authType: cfg.username || cfg.password ? AuthType.Auto : AuthType.None,
      httpAgent: this.agent,
      httpsAgent: this.agent,
    });
  }

  async stat(path: string): Promise<Entry> {
    await this.ready();
    return this.statAbs(this.abs(path), path);
  }

  async *list(dir: string): AsyncIterable<Entry> {
    await this.ready();
    const target = this.abs(dir);
    const items = (await this.call(dir, (signal) => this.client.getDirectoryContents(target, { includeSelf: true, signal }), { safe: true })) as FileStat[];
    const self = items.find((i) => i.filename === target);
    // PROPFIND on a file answers with the file alone.
    if (self?.type === 'file' || (!self && items.length === 1 && items[0].type === 'file')) throw new AppError('not_found', { path: dir });
    for (const item of items) {
      if (item === self || item.basename === '' || item.basename.startsWith(TEMP_PREFIX)) continue;
      yield toEntry(item, item.basename);
    }
  }

  async read(path: string, range?: ByteRange, signal?: AbortSignal): Promise<Readable> {
    await this.ready();
    const out = new PassThrough({ highWaterMark: READ_HIGH_WATER_MARK });
    // A full `out` means our reader is slow, not the server: that is no stall.
    const stall = stallTimer(this.cfg.timeoutMs, () => out.writableNeedDrain);
    const failure = (e: unknown) => davError(e, { path, timedOut: stall.fired, cancelled: signal?.aborted, timeoutMs: this.cfg.timeoutMs });
    let body: Readable;
    let partial: boolean;
    try {
      const res = await retryOnStaleSocket(() =>
        this.client.customRequest(this.abs(path), {
          method: 'GET',
          headers: range ? { Range: `bytes=${range.start}-${range.end ?? ''}` } : {},
          signal: signal ? AbortSignal.any([stall.signal, signal]) : stall.signal,
        }),
      );
      body = (res as unknown as { body: Readable }).body;
      partial = res.status === 206;
    } catch (e) {
      stall.stop();
      throw failure(e);
    }
    body.on('data', stall.touch);
    body.once('end', stall.stop);
    body.once('error', stall.stop);
    out.once('close', () => {
      stall.stop();
      if (!body.readableEnded) body.destroy();
    });
    // A server that ignores Range sends the whole file: cut the range out here.
    const bytes = range && !partial ? takeBytes(body, range.start, range.end === undefined ? Infinity : range.end - range.start + 1) : body;
    pipeFrom(bytes, out, (e) => out.destroy(failure(e)));
    return out;
  }

  async write(path: string, body: Readable, opts: WriteOptions = {}): Promise<Entry> {
    try {
      await this.ready();
      // MOVE with Overwrite: F decides atomically; this early check only spares a doomed upload.
      if (opts.overwrite === false && (await this.exists(path))) throw new AppError('conflict', { path });
    } catch (e) {
      body.destroy();
      throw e;
    }
    const temp = `${this.abs(parentRel(path))}/${TEMP_PREFIX}${randomToken(9)}`;
    await this.upload(temp, path, body, opts);
    try {
      await this.call(path, (signal) => this.client.moveFile(temp, this.abs(path), { overwrite: opts.overwrite !== false, signal }));
    } catch (e) {
      await this.discard(temp);
      throw e;
    }
    return this.statAbs(this.abs(path), path);
  }

  async mkdir(path: string): Promise<void> {
    await this.ready();
    await this.mkdirp(this.abs(path), path);
  }

  async delete(path: string): Promise<void> {
    await this.ready();
    await this.call(path, (signal) => this.client.deleteFile(this.abs(path), { signal }), { long: true });
  }

  async move(from: string, to: string, opts: { overwrite: boolean }): Promise<void> {
    await this.ready();
    await this.call(from, (signal) => this.client.moveFile(this.abs(from), this.abs(to), { overwrite: opts.overwrite, signal }), { long: true });
  }

  async copy(from: string, to: string, opts: { overwrite: boolean; signal?: AbortSignal }): Promise<void> {
    await this.ready();
    await this.call(from, (signal) => this.client.copyFile(this.abs(from), this.abs(to), { overwrite: opts.overwrite, signal }), {
      long: true,
      signal: opts.signal,
    });
  }

  async close(): Promise<void> {
    this.agent.destroy();
  }

  /** Absolute server path (below the URL) of a storage-relative path. */
  private abs(rel: string): string {
    return rel === '' ? this.cfg.root : `${this.cfg.root}/${rel}`;
  }

  /** Creates the storage root once per driver; a failure is retried by the next call. */
  private ready(): Promise<void> {
    this.rootReady ??= this.mkdirp(this.cfg.root, '').catch((e: unknown) => {
      this.rootReady = null;
      throw e;
    });
    return this.rootReady;
  }

  /**
   * Runs one request under the call timeout (or `LONG_CALL_FACTOR` of it) and
   * maps its failure. `safe` (read-only) requests get one retry on a stale socket.
   */
  private async call<T>(
    path: string,
    fn: (signal: AbortSignal) => Promise<T>,
    opts: { long?: boolean; safe?: boolean; signal?: AbortSignal } = {},
  ): Promise<T> {
    const ms = this.cfg.timeoutMs * (opts.long ? LONG_CALL_FACTOR : 1);
    const timeout = AbortSignal.timeout(ms);
    const signal = opts.signal ? AbortSignal.any([timeout, opts.signal]) : timeout;
    try {
      return await (opts.safe ? retryOnStaleSocket(() => fn(signal)) : fn(signal));
    } catch (e) {
      throw davError(e, { path, timedOut: timeout.aborted, cancelled: opts.signal?.aborted, timeoutMs: ms });
    }
  }

  private async statAbs(abs: string, path: string): Promise<Entry> {
    const s = (await this.call(path, (signal) => this.client.stat(abs, { signal }), { safe: true })) as FileStat;
    return toEntry(s, baseName(path));
  }

  private async exists(path: string): Promise<boolean> {
    try {
      await this.statAbs(this.abs(path), path);
      return true;
    } catch (e) {
      if (e instanceof AppError && e.code === 'not_found') return false;
      throw e;
    }
  }

  /** PUTs `body` to `temp` under a stall timer, checking the declared size; removes `temp` on failure. */
  private async upload(temp: string, path: string, body: Readable, opts: WriteOptions): Promise<void> {
    const stall = stallTimer(this.cfg.timeoutMs);
    // The source's own failure (a client that went away, a size mismatch) is the one to report,
    // not the broken request it causes.
    let sourceError: unknown;
    const counted = countBytes(opts.size, stall.touch, (e) => {
      sourceError ??= e;
    });
    // Only the body's own failure: a failed request must not be mistaken for it.
    pipeFrom(body, counted, (e) => (sourceError ??= e));
    try {
      await this.client.putFileContents(temp, counted, {
        overwrite: true,
        signal: opts.signal ? AbortSignal.any([stall.signal, opts.signal]) : stall.signal,
        headers: opts.size === undefined ? {} : { 'Content-Length': String(opts.size) },
      });
    } catch (e) {
      body.destroy();
      await this.discard(temp);
      if (opts.signal?.aborted) throw new AppError('cancelled');
      throw sourceError ?? davError(e, { path, timedOut: stall.fired, timeoutMs: this.cfg.timeoutMs });
    } finally {
      stall.stop();
    }
  }

  /** Best-effort removal of a temp file; the listing hides it if this fails too. */
  private async discard(temp: string): Promise<void> {
    try {
      await this.client.deleteFile(temp, { signal: AbortSignal.timeout(this.cfg.timeoutMs) });
    } catch (e) {
      releaseBody(e);
    }
  }

  /** MKCOL `abs`, creating missing parents; an existing folder is fine, an existing file is `conflict`. */
  private async mkdirp(abs: string, path: string): Promise<void> {
    const outcome = await this.mkcol(abs, path);
    if (outcome === 'exists') {
      if ((await this.statAbs(abs, path)).type !== 'dir') throw new AppError('conflict', { path });
      return;
    }
    if (outcome === 'created') return;
    const parent = abs.slice(0, abs.lastIndexOf('/'));
    if (parent === '') throw new AppError('not_found', { path });
    await this.mkdirp(parent, path);
    if ((await this.mkcol(abs, path)) === 'no_parent') throw new AppError('not_found', { path });
  }

  private mkcol(abs: string, path: string): Promise<'created' | 'exists' | 'no_parent'> {
    return this.call(path, async (signal) => {
      try {
        await this.client.createDirectory(abs, { signal });
        return 'created';
      } catch (e) {
        const status = statusOf(e);
        if (status !== 405 && status !== 409) throw e;
        releaseBody(e);
        return status === 405 ? 'exists' : 'no_parent';
      }
    });
  }
}

/**
 * Runs a read-only request again once when it died on a reset socket: after a
 * server restart the first request often goes out on a kept-alive socket the
 * old process closed, and the server never saw it.
 */
async function retryOnStaleSocket<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (errorCode(e) !== 'ECONNRESET') throw e;
    return fn();
  }
}

function toEntry(s: FileStat, name: string): Entry {
  const dir = s.type === 'directory';
  const mtime = s.lastmod ? Date.parse(s.lastmod) : NaN;
  return {
    name,
    type: dir ? 'dir' : 'file',
    size: dir ? 0 : Number.isFinite(s.size) ? s.size : 0,
    mtime: Number.isFinite(mtime) ? mtime : 0,
    ...(!dir && s.etag ? { etag: s.etag } : {}),
    ...(!dir && s.mime ? { mime: s.mime } : {}),
  };
}

/** Keep-alive agent; for https it applies the TLS trust and checks the pin on every new socket. */
function createAgent(url: string, trust: TlsTrust): http.Agent {
  const base = { keepAlive: true, maxSockets: 8 };
  if (!url.startsWith('https:')) return new http.Agent(base);
  // A resumed session shows no certificate to check, so pinning disables resumption.
  const agent = new https.Agent({ ...base, ...tlsConnectOptions(trust), maxCachedSessions: trust.fingerprint ? 0 : 100 });
  const create = agent.createConnection.bind(agent);
  agent.createConnection = (...args: Parameters<typeof create>) => {
    const socket = create(...args);
    enforcePin(socket as TLSSocket, trust);
    return socket;
  };
  return agent;
}
