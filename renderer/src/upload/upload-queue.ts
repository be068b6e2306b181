/**
 * The upload queue: which file uploads when, through which flow, and how it
 * survives pauses, network drops and reloads. It is pure state-machine logic
 * over an injected Transport (HTTP in the app, an in-memory fake in tests).
 *
 * Per file: queued -> uploading -> finalizing -> done, with side exits
 * paused (user), offline (transient failure; retried with backoff and on the
 * browser's `online` event), error (the server refused; message as sent),
 * cancelled, and needs_file (restored after a reload: the browser cannot reopen
 * a file by itself, so the user picks it again and the upload continues from
 * the parts the server already holds, read back with `status`). An upload with
 * a byte source survives a reload only when the source says how to rebuild it
 * (`vault`); the panel rebuilds it and hands it to `attach`.
 */
import { ApiError, isTransient } from '../api/client';
import type { UploadSession, UploadStatus } from '../api/types';

/** Files up to this size go in one multipart/form-data POST. */
export const SIMPLE_MAX = 5 * 1000 * 1000;
export const DEFAULT_CHUNK = 8 * 1024 * 1024;
export const PARALLEL_PARTS = 4;
export const PARALLEL_FILES = 2;
const MAX_BACKOFF_MS = 30_000;

export type UploadState = 'queued' | 'uploading' | 'finalizing' | 'paused' | 'offline' | 'done' | 'error' | 'cancelled' | 'needs_file';

/** A File, or anything with its name and date (tests build them from Blobs). */
export type FileLike = Blob & { readonly name: string; readonly lastModified: number };

/** The server calls the queue needs. Each rejects with ApiError (status 0 for no answer) or AbortError. */
export interface Transport {
  /** Single-shot upload of a small file into `folder`; resolves when the server has written it. */
  simple(folder: string, file: FileLike, onProgress: (loaded: number) => void, signal: AbortSignal): Promise<void>;
  init(req: { path: string; size: number; mime: string; chunk_size: number }, signal: AbortSignal): Promise<UploadSession>;
  /** Sends one part (to its presigned URL when given) and resolves with its ETag; `sha256` when the caller already hashed it. */
  part(
    uploadId: string,
    part: number,
    body: Blob,
    url: string | null,
    onProgress: (loaded: number) => void,
    signal: AbortSignal,
    sha256?: string,
  ): Promise<string>;
  status(uploadId: string, signal: AbortSignal): Promise<UploadStatus>;
  finalize(uploadId: string, etags: { part: number; etag: string }[], signal: AbortSignal): Promise<void>;
  /** Best effort; failures are ignored by the queue. */
  abort(uploadId: string): Promise<void>;
}

/**
 * Bytes to send instead of the file's own (an encrypted upload's ciphertext). `slice` must answer the same
 * bytes for the same range every time, so a part resent after a drop matches what the server already holds.
 */
export interface UploadSource {
  size: number;
  slice(start: number, end: number): Promise<SourcePart>;
  /** The name the upload panel shows (the stored name may be ciphertext). */
  label: string;
  /** Kept in the pending record so the same bytes can be made again after a reload (an encrypted upload). */
  vault?: VaultPending;
}

/** An encrypted upload's resume data: its encrypted folder and its FDV1 header (b64u), which the storage holds as part 1 anyway. */
export interface VaultPending {
  folder_id: number;
  header: string;
}

/** A source's part: its bytes, or its bytes and their SHA-256 (computed where they were made, so they are not read back to hash them). */
export type SourcePart = Blob | { body: Blob; sha256: string };

const bodyOf = (p: SourcePart): Blob => (p instanceof Blob ? p : p.body);

/** What survives a reload (localStorage in the app). */
export interface PendingRecord {
  key: string;
  upload_id: string;
  path: string;
  name: string;
  size: number;
  last_modified: number;
  /** Set for an encrypted upload (then `path` and `name` are ciphertext, `size` the ciphertext's and `last_modified` 0). */
  vault?: VaultPending;
}

export interface PendingStore {
  list(): PendingRecord[];
  save(r: PendingRecord): void;
  remove(key: string): void;
}

export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(h: unknown): void;
}

/** A read-only view of one upload for the UI. */
export interface UploadView {
  key: string;
  name: string;
  path: string;
  size: number;
  sent: number;
  state: UploadState;
  error: string | null;
  /** An encrypted upload restored after a reload: its file must be picked again through the vault. */
  vault: VaultPending | null;
}

interface Item {
  key: string;
  file: FileLike | null;
  /** Not kept across a reload: a source's keys live in memory only, so such an upload cannot resume after one. */
  source: UploadSource | null;
  /** An encrypted upload restored from its pending record, until its source is attached again. */
  vault: VaultPending | null;
  folder: string;
  path: string;
  size: number;
  state: UploadState;
  error: string | null;
  uploadId: string | null;
  chunkSize: number;
  urls: Map<number, string> | null;
  parts: Map<number, { etag: string; size: number }>;
  inflight: Map<number, number>;
  /** The server's part list must be re-read before sending (after a drop or reload). */
  resync: boolean;
  attempt: number;
  ctrl: AbortController | null;
  timer: unknown;
}

const isAbort = (e: unknown): boolean => (e as Error)?.name === 'AbortError';

/** Number of parts for `size` bytes; an empty file still has one (empty) part. */
export function partCount(size: number, chunk: number): number {
  return Math.max(1, Math.ceil(size / chunk));
}

/** Backoff before retry `attempt` (1-based): 1 s, 2 s, 4 s, ... capped at 30 s. */
export function backoffMs(attempt: number): number {
  return Math.min(MAX_BACKOFF_MS, 1000 * 2 ** Math.max(0, attempt - 1));
}

export class UploadQueue {
  private items: Item[] = [];
  private listeners = new Set<() => void>();
  private active = 0;
  private seq = 0;
  private version = 0;
  private onDone: ((path: string) => void) | null = null;

  constructor(
    private readonly transport: Transport,
    private readonly store: PendingStore,
    private readonly timers: Timers = globalThis as unknown as Timers,
    private readonly chunkSize = DEFAULT_CHUNK,
  ) {
    // Uploads of an earlier session wait for their file to be picked again.
    for (const r of store.list()) {
      const item = this.newItem(r.key, null, folderOf(r.path), r.path, r.size, 'needs_file', r.upload_id);
      item.vault = r.vault ?? null;
      this.items.push(item);
    }
  }

  /** Subscribes to any change; returns the unsubscribe function. */
  subscribe(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Called with the target path after each finished upload (to refresh that folder). */
  setOnDone(fn: ((path: string) => void) | null): void {
    this.onDone = fn;
  }

  /** Changes on every state or progress change (for useSyncExternalStore). */
  getVersion(): number {
    return this.version;
  }

  /** Snapshot of every upload, oldest first. */
  list(): UploadView[] {
    return this.items.map((i) => ({
      key: i.key,
      name: i.source?.label ?? baseOf(i.path),
      path: i.path,
      size: i.size,
      sent: sentOf(i),
      state: i.state,
      error: i.error,
      vault: i.state === 'needs_file' ? i.vault : null,
    }));
  }

  /** Bytes sent and total over uploads that are not cancelled. */
  totals(): { sent: number; total: number; active: number } {
    let sent = 0;
    let total = 0;
    let active = 0;
    for (const i of this.items) {
      if (i.state === 'cancelled') continue;
      sent += sentOf(i);
      total += i.size;
      if (!isFinal(i.state)) active++;
    }
    return { sent, total, active };
  }

  /** Queues `file` for `<folder>/<relPath>` (relPath keeps a dropped folder's structure); `source` sends other bytes for it. */
  add(folder: string, file: FileLike, relPath: string = file.name, source: UploadSource | null = null): string {
    const path = `${folder.replace(/\/+$/, '')}/${relPath.replace(/^\/+/, '')}`;
    const key = `u${Date.now().toString(36)}-${++this.seq}`;
    const item = this.newItem(key, file, folderOf(path), path, source?.size ?? file.size, 'queued', null);
    item.source = source;
    this.items.push(item);
    this.changed();
    this.pump();
    return key;
  }

  /** Stops sending; parts already stored on the server are kept. No-op unless running or waiting. */
  pause(key: string): void {
    const i = this.find(key);
    if (!i || !['queued', 'uploading', 'offline'].includes(i.state)) return;
    this.halt(i);
    i.state = 'paused';
    i.resync = i.uploadId !== null;
    this.changed();
  }

  /** Continues a paused, failed or waiting upload from where the server stands. */
  resume(key: string): void {
    const i = this.find(key);
    if (!i || !['paused', 'error', 'offline'].includes(i.state) || !i.file) return;
    this.timers.clearTimeout(i.timer);
    i.state = 'queued';
    i.error = null;
    i.attempt = 0;
    i.resync = i.uploadId !== null;
    this.changed();
    this.pump();
  }

  /** Stops and discards the upload, telling the server to drop its staged parts. Idempotent. */
  cancel(key: string): void {
    const i = this.find(key);
    if (!i || i.state === 'done' || i.state === 'cancelled') return;
    this.halt(i);
    if (i.uploadId) void this.transport.abort(i.uploadId).catch(() => {});
    this.store.remove(i.key);
    i.state = 'cancelled';
    this.changed();
  }

  /**
   * Re-attaches a picked file to an upload restored from an earlier session.
   * Refused (false) when the name or size differ, so another file is never appended.
   * An encrypted upload takes its rebuilt source (the caller checked the file against
   * the decrypted name), and only with it.
   */
  attach(key: string, file: FileLike, source: UploadSource | null = null): boolean {
    const i = this.find(key);
    if (!i || i.state !== 'needs_file' || !i.vault !== !source) return false;
    if (source ? source.size !== i.size : file.size !== i.size || file.name !== baseOf(i.path)) return false;
    i.file = file;
    i.source = source;
    i.state = 'queued';
    i.resync = true;
    this.changed();
    this.pump();
    return true;
  }

  /** The network is back: retry every waiting upload now instead of at its backoff time. */
  online(): void {
    for (const i of this.items) if (i.state === 'offline') this.resume(i.key);
  }

  /** Drops finished, failed and cancelled rows from the list. */
  clearFinished(): void {
    this.items = this.items.filter((i) => !['done', 'cancelled', 'error'].includes(i.state));
    this.changed();
  }

  private newItem(key: string, file: FileLike | null, folder: string, path: string, size: number, state: UploadState, uploadId: string | null): Item {
    return {
      key,
      file,
      source: null,
      vault: null,
      folder,
      path,
      size,
      state,
      error: null,
      uploadId,
      chunkSize: this.chunkSize,
      urls: null,
      parts: new Map(),
      inflight: new Map(),
      resync: uploadId !== null,
      attempt: 0,
      ctrl: null,
      timer: null,
    };
  }

  private find(key: string): Item | undefined {
    return this.items.find((i) => i.key === key);
  }

  private halt(i: Item): void {
    this.timers.clearTimeout(i.timer);
    i.ctrl?.abort();
    i.ctrl = null;
    i.inflight.clear();
  }

  private changed(): void {
    this.version++;
    for (const fn of this.listeners) fn();
  }

  private pump(): void {
    while (this.active < PARALLEL_FILES) {
      const next = this.items.find((i) => i.state === 'queued' && i.file);
      if (!next) return;
      this.active++;
      void this.run(next).finally(() => {
        this.active--;
        this.pump();
      });
    }
  }

  private async run(i: Item): Promise<void> {
    const ctrl = new AbortController();
    i.ctrl = ctrl;
    i.state = 'uploading';
    this.changed();
    try {
      if (i.size <= SIMPLE_MAX && i.uploadId === null) await this.runSimple(i, ctrl.signal);
      else await this.runChunked(i, ctrl.signal);
      if (ctrl.signal.aborted) return;
      i.state = 'done';
      i.ctrl = null;
      this.store.remove(i.key);
      this.changed();
      this.onDone?.(i.path);
    } catch (e) {
      // pause() and cancel() already set the state; the aborted request is theirs.
      if (ctrl.signal.aborted || isAbort(e)) return;
      i.ctrl = null;
      i.inflight.clear();
      if (isTransient(e)) {
        i.state = 'offline';
        i.resync = i.uploadId !== null;
        i.attempt++;
        const wait = e instanceof ApiError && e.retryAfter ? e.retryAfter * 1000 : backoffMs(i.attempt);
        i.timer = this.timers.setTimeout(() => {
          if (i.state !== 'offline') return;
          i.state = 'queued';
          this.changed();
          this.pump();
        }, wait);
      } else {
        i.state = 'error';
        i.error = (e as Error).message;
      }
      this.changed();
    }
  }

  private async runSimple(i: Item, signal: AbortSignal): Promise<void> {
    const file = i.source ? new File([bodyOf(await i.source.slice(0, i.size))], baseOf(i.path), { type: 'application/octet-stream' }) : i.file!;
    await this.transport.simple(
      i.folder,
      file,
      (loaded) => {
        i.inflight.set(1, loaded);
        this.changed();
      },
      signal,
    );
    i.inflight.clear();
    i.parts.set(1, { etag: '', size: i.size });
  }

  private async runChunked(i: Item, signal: AbortSignal): Promise<void> {
    if (i.uploadId && i.resync) {
      try {
        const st = await this.transport.status(i.uploadId, signal);
        i.chunkSize = st.chunk_size;
        i.parts = new Map(st.parts.map((p) => [p.part, { etag: p.etag, size: p.size }]));
      } catch (e) {
        // The session expired or was swept: start over rather than fail.
        if (!(e instanceof ApiError) || (e.status !== 404 && e.status !== 410)) throw e;
        i.uploadId = null;
        i.parts.clear();
      }
      i.resync = false;
    }
    if (!i.uploadId) {
      // A source's bytes are opaque: its file's type is not told to the server.
      const mime = (!i.source && i.file!.type) || 'application/octet-stream';
      const s = await this.transport.init({ path: i.path, size: i.size, mime, chunk_size: this.chunkSize }, signal);
      i.uploadId = s.upload_id;
      i.chunkSize = s.chunk_size || this.chunkSize;
      i.urls = s.presigned_urls ? new Map(s.presigned_urls.map((u) => [u.part, u.url])) : null;
      i.parts.clear();
      // A source is kept only when it can be rebuilt, and then without the plaintext file's date.
      const vault = i.source?.vault;
      if (!i.source || vault)
        this.store.save({
          key: i.key,
          upload_id: s.upload_id,
          path: i.path,
          name: baseOf(i.path),
          size: i.size,
          last_modified: vault ? 0 : i.file!.lastModified,
          ...(vault && { vault }),
        });
    }
    const total = partCount(i.size, i.chunkSize);
    const missing: number[] = [];
    for (let p = 1; p <= total; p++) if (!i.parts.has(p)) missing.push(p);
    await pool(missing, PARALLEL_PARTS, async (p) => {
      const start = (p - 1) * i.chunkSize;
      const end = Math.min(i.size, start + i.chunkSize);
      const got = i.source ? await i.source.slice(start, end) : i.file!.slice(start, end);
      const body = bodyOf(got);
      const etag = await this.transport.part(
        i.uploadId!,
        p,
        body,
        i.urls?.get(p) ?? null,
        (loaded) => {
          i.inflight.set(p, loaded);
          this.changed();
        },
        signal,
        got instanceof Blob ? undefined : got.sha256,
      );
      i.inflight.delete(p);
      i.parts.set(p, { etag, size: body.size });
      i.attempt = 0;
      this.changed();
    });
    i.state = 'finalizing';
    this.changed();
    const etags = [...i.parts.entries()].sort((a, b) => a[0] - b[0]).map(([part, v]) => ({ part, etag: v.etag }));
    await this.transport.finalize(i.uploadId!, etags, signal);
  }
}

function isFinal(s: UploadState): boolean {
  return s === 'done' || s === 'error' || s === 'cancelled';
}

function sentOf(i: Item): number {
  let n = 0;
  for (const p of i.parts.values()) n += p.size;
  for (const v of i.inflight.values()) n += v;
  return Math.min(n, i.size);
}

function baseOf(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

function folderOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}

/** Runs `fn` over `items` with at most `limit` in flight; the first rejection wins, the rest still settle. */
async function pool<T>(items: T[], limit: number, fn: (t: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: unknown = null;
  const worker = async () => {
    while (failure === null && next < items.length) {
      const t = items[next++];
      try {
        await fn(t);
      } catch (e) {
        failure ??= e;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure !== null) throw failure;
}
