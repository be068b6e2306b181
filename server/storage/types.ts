/**
 * The storage driver contract. Drivers know nothing of the database, users or
 * HTTP: they receive clean relative POSIX paths ('' is the storage root; see
 * lib/paths) and throw AppError with these codes:
 *   - `not_found`            the path (or, for writes, its parent folder) does not exist
 *   - `conflict`             the target exists and the call was not allowed to replace it
 *   - `storage_unreachable`  the backend cannot be reached or refused the session
 *                            (params.reason carries the backend's own sentence)
 *   - `permission_denied`    the backend refused this one path
 *   - `name_not_allowed`     the backend forbids this name
 *   - `unsupported`          an optional capability the backend lacks
 *   - `cancelled`            the AbortSignal fired
 */
import type { Readable } from 'node:stream';
import type { DriverDescriptor } from '../contract';

export type EntryType = 'file' | 'dir';

/** One item as the backend reports it. */
export interface Entry {
  name: string;
  type: EntryType;
  /** Bytes; 0 for folders. */
  size: number;
  /** Modification time, epoch milliseconds (0 when the backend has none). */
  mtime: number;
  /** Backend content tag when the backend has one (S3 ETag, WebDAV getetag); files only. */
  etag?: string;
  /** MIME type when the backend stores one. */
  mime?: string;
}

/** An entry of a flat walk: `path` is relative to the walk's prefix root ('' = storage root). */
export interface WalkEntry extends Entry {
  path: string;
}

/**
 * What `walk` returns: its entries one by one. A backend that reads them in pages (the local worker's
 * batches) may also hand out the pages themselves (`pages`), for a consumer that takes entries in bulk
 * (the sync engine: an await per entry cost a million-entry re-sync about a CPU-second of the event loop).
 * Iterate one or the other, once.
 */
export interface WalkIterable extends AsyncIterable<WalkEntry> {
  pages?(): AsyncIterable<readonly WalkEntry[]>;
}

/** Inclusive byte range; `end` omitted means to the end of the file. */
export interface ByteRange {
  start: number;
  end?: number;
}

export interface WriteOptions {
  /** Declared size when known; drivers may use it to choose buffered vs streamed. */
  size?: number;
  mime?: string;
  /** When false and the target exists, throw `conflict`. Default true (replace). */
  overwrite?: boolean;
  signal?: AbortSignal;
  /**
   * The body is exactly this file's bytes, a staged file in the data folder
   * that the caller gives up (the NFS gateway's stage): a driver that can
   * move it into place (local, same filesystem) renames it instead of
   * reading `body`. Others stream `body` as always, so it must stay readable.
   */
  fromFile?: string;
}

export interface PresignOptions {
  expiresInSeconds: number;
  /** Suggested download file name (Content-Disposition). */
  filename?: string;
  inline?: boolean;
  mime?: string;
}

/**
 * Resumable multipart uploads done by the backend itself (S3 multipart) or by
 * a staging area on the same filesystem (local: parts written in place into one
 * staged file, then a rename). `handle` is an opaque JSON-serialisable string
 * the uploads module stores, so a session survives a restart.
 */
export interface MultipartCapability {
  /** True when parts can be PUT by the browser straight to presigned URLs. */
  readonly presigned: boolean;
  /** Starts a session; nothing is visible at `path` until `complete`. */
  init(path: string, opts: { size: number; partSize: number; mime?: string }): Promise<{ handle: string }>;
  /** Stores part `part` (1-based). Idempotent: re-sending a part replaces it. Returns the part's etag. */
  putPart(handle: string, part: number, body: Readable, size: number, signal?: AbortSignal): Promise<{ etag: string }>;
  /** Presigned PUT URL for one part (only when `presigned`). */
  presignPart?(handle: string, part: number, expiresInSeconds: number): Promise<string>;
  /** Publishes atomically; parts must be listed in order with the etags putPart (or the browser) saw. */
  complete(handle: string, parts: Array<{ part: number; etag: string }>): Promise<Entry>;
  /** Discards staged data. Idempotent. */
  abort(handle: string): Promise<void>;
}

/** Change notification from `watch`: relative paths whose folder should be revalidated. */
export type WatchListener = (changedRelPaths: string[]) => void;

export interface StorageDriver {
  /** Metadata of one path. '' is the root (a folder). Missing → `not_found`. */
  stat(path: string): Promise<Entry>;
  /** Children of a folder, any order. Missing folder → `not_found`; a file → `not_found`. */
  list(dir: string): AsyncIterable<Entry>;
  /**
   * A readable stream of the file's bytes, or of `range` only. Missing → `not_found`.
   * The stream must honour backpressure and be destroyable.
   */
  read(path: string, range?: ByteRange, signal?: AbortSignal): Promise<Readable>;
  /**
   * Writes atomically: readers see the old content or the new, never a mix; a
   * failed or aborted write leaves no partial file visible. The parent folder
   * must exist (`not_found` otherwise). Returns the new entry.
   */
  write(path: string, body: Readable, opts?: WriteOptions): Promise<Entry>;
  /** Creates the folder and any missing parents. Idempotent. */
  mkdir(path: string): Promise<void>;
  /** Deletes a file or a folder with all its content. Missing → `not_found`. */
  delete(path: string): Promise<void>;
  /** Releases connections and watchers. Idempotent. */
  close(): Promise<void>;

  // Optional capabilities. Callers fall back to core methods when absent.
  /** Flat recursive listing of everything below `prefix` (folders included). */
  walk?(prefix: string, signal?: AbortSignal): WalkIterable;
  /** Server-side move/rename. Target exists and !overwrite → `conflict`. */
  move?(from: string, to: string, opts: { overwrite: boolean }): Promise<void>;
  /** Server-side copy of a file or folder. Target exists and !overwrite → `conflict`. */
  copy?(from: string, to: string, opts: { overwrite: boolean; signal?: AbortSignal }): Promise<void>;
  /** A time-limited URL the client can GET directly. */
  presignGet?(path: string, opts: PresignOptions): Promise<string>;
  multipart?: MultipartCapability;
  /** Starts watching for changes; returns a stop function. Throws `unsupported` when it cannot scale. */
  watch?(listener: WatchListener): Promise<() => void>;
  /**
   * Absolute local filesystem path of `path` after containment checks (local
   * driver only); lets the HTTP layer use sendfile-like fast paths.
   */
  localPath?(path: string): Promise<string>;
  /**
   * `stat` and `localPath` in one containment check (local driver only): what
   * a download of a local file needs, with one real-path walk instead of two.
   * Missing → `not_found`, like `stat`. `path` is null when a decorator
   * answers from elsewhere (replication's read fallback): serve by `read`.
   * `open`: also hand over `fd`, a read descriptor of that very file, where
   * the driver can check containment on the opened file itself (then the
   * download needs no second lookup); the caller owns it and must close it.
   * Or, instead of `fd`, the file's `bytes` when the driver keeps small files in memory.
   * An error or a folder never leaves a descriptor open.
   */
  statLocal?(path: string, o?: { open?: boolean }): Promise<{ entry: Entry; path: string | null; fd?: number; bytes?: Buffer }>;
  /**
   * True when the driver counts its own wire requests through
   * `DriverContext.countRequest` (see storage/meter.ts); the meter decorator
   * then does not count its calls again.
   */
  readonly selfMetered?: boolean;
}

export type { FieldType, DriverField, DriverCapabilities, DriverDescriptor } from '../contract';

/**
 * Wraps every driver the manager builds, in the order given (read-only, later
 * replication): the place cross-cutting storage behaviour plugs in without
 * any door knowing. `wrap` must keep the driver's optional capabilities as
 * they are (present only when the driver has them).
 */
export interface DriverDecorator {
  name: string;
  wrap(driver: StorageDriver, uid: string): StorageDriver;
}

/** What a driver factory receives: the storage's config with aliases resolved and secrets decrypted. */
export interface DriverContext {
  /** Data directory for driver-owned state (known_hosts, staging for remote uploads). */
  stateDir: string;
  /**
   * Where upload sessions stage (set from `SERVICE_STAGING_DIR`: a folder every
   * instance mounts, so a session's chunks may reach any instance); unset:
   * `staging` under `stateDir`.
   */
  stagingDir?: string;
  /** Storage uid; scopes driver state. */
  uid: string;
  signal?: AbortSignal;
  /**
   * Set in the process that owns the storages (the server, not a CLI command
   * beside it): its start time. A driver may then clear leftovers of a killed
   * predecessor (temp files, staging) older than this; nothing newer is ever its
   * to clear.
   */
  staleBefore?: number;
  /**
   * Set for a metered storage (not local): a driver that sees its wire
   * requests reports each one here and sets `selfMetered` (storage/meter.ts).
   */
  countRequest?: (cls: import('./meter').RequestClass) => void;
}

export interface DriverModule {
  descriptor: DriverDescriptor;
  /**
   * Validates the resolved config beyond the descriptor (root guard, formats).
   * Returns problems as [{field, message}] ; empty means valid.
   */
  validate?(config: Record<string, unknown>): Array<{ field: string; message: string }>;
  /** Builds a driver; does not touch the network (the manager probes it). */
  create(config: Record<string, unknown>, ctx: DriverContext): Promise<StorageDriver> | StorageDriver;
}
