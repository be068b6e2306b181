/**
 * The `s3` driver: one prefix of one bucket on AWS S3 or an S3-compatible
 * store. Folders are key prefixes (empty ones kept by a hidden `.empty`
 * marker); folder move, copy and delete recurse the prefix; sync walks the
 * prefix flat, 1,000 keys per request.
 */
import { CopyObjectCommand, DeleteObjectCommand, DeleteObjectsCommand, GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { mimeOf } from '../../../lib/mime';
import type { Readable } from 'node:stream';
import { AppError } from '../../../errors';
import { baseName, isWithin, parentRel } from '../../../lib/paths';
import type { ByteRange, Entry, PresignOptions, StorageDriver, WalkEntry, WriteOptions } from '../../types';
import { Chunker } from './chunker';
import { S3Api } from './client';
import { copySource, isFolderKey, KeyMap } from './keys';
import { S3Multipart } from './multipart';
import { fitRange } from './range';
import { checkWritable, folderExists, headEntry, headOrNull, listKeys, listPages, objectEntry, PAGE_KEYS } from './objects';

/** Bodies up to this size are buffered, so the SDK can replay them on a transient failure (spec: 8 MiB). */
export const BUFFER_LIMIT = 8 * 1024 * 1024;
/** Server-side copies in flight while a folder is copied or moved. */
const COPY_CONCURRENCY = 8;

type Kind = 'file' | 'dir' | null;

const dirEntry = (name: string): Entry => ({ name, type: 'dir', size: 0, mtime: 0 });

/** RFC 6266 / 5987 Content-Disposition that survives any file name. */
function contentDisposition(filename: string, inline: boolean): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${inline ? 'inline' : 'attachment'}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

export class S3Driver implements StorageDriver {
  readonly multipart: S3Multipart;
  /** Absent when the storage sets `disable_presign`: downloads then stream through the service. */
  readonly presignGet?: (path: string, opts: PresignOptions) => Promise<string>;

  /** True when the client counts its wire requests for the meter (storage/meter.ts). */
  readonly selfMetered: boolean;

  constructor(
    private readonly api: S3Api,
    private readonly keys: KeyMap,
    opts: { presign: boolean; selfMetered?: boolean },
  ) {
    this.multipart = new S3Multipart(api, keys);
    this.selfMetered = !!opts.selfMetered;
    if (opts.presign) this.presignGet = (path, o) => this.presign(path, o);
  }

  /** The underlying SDK client, for instrumentation only (request counting in tests and benchmarks). */
  get client(): S3Client {
    return this.api.client;
  }

  /** A file by HEAD, else a folder when any key lies below it. '' is the root and checks the bucket is reachable. Missing → `not_found`. */
  async stat(path: string): Promise<Entry> {
    if (path === '') {
      // One cheap request proves the bucket, the credentials and the endpoint.
      await listPages(this.api, this.keys.folder(''), '', { maxKeys: 1 }).next();
      return dirEntry('');
    }
    const file = await headOrNull(this.api, this.keys.file(path), path);
    if (file) return file;
    if (await folderExists(this.api, this.keys, path)) return dirEntry(baseName(path));
    throw new AppError('not_found', { path });
  }

  /** Children from ListObjectsV2 with Delimiter '/', markers hidden. A missing folder or a file → `not_found`; the root may be empty. */
  async *list(dir: string): AsyncIterable<Entry> {
    const base = this.keys.folder(dir);
    let seen = false;
    for await (const page of listPages(this.api, base, dir, { delimiter: '/' })) {
      for (const p of page.CommonPrefixes ?? []) {
        seen = true;
        const name = KeyMap.below(base, p.Prefix ?? '').replace(/\/$/, '');
        if (name !== '') yield dirEntry(name);
      }
      for (const o of page.Contents ?? []) {
        seen = true;
        const name = KeyMap.below(base, o.Key ?? '');
        if (!isFolderKey(name) && name !== '') yield objectEntry(name, o);
      }
    }
    if (!seen && dir !== '') throw new AppError('not_found', { path: dir });
  }

  /** The object's bytes (or the inclusive `range`) as the HTTP response body streams them. Missing → `not_found`. */
  async read(path: string, range?: ByteRange, signal?: AbortSignal): Promise<Readable> {
    const key = this.keys.file(path);
    const Range = range ? `bytes=${range.start}-${range.end ?? ''}` : undefined;
    const r = await this.api.call(path, signal, (abortSignal) =>
      this.api.client.send(new GetObjectCommand({ Bucket: this.api.bucket, Key: key, Range }), { abortSignal }),
    );
    const body = range ? fitRange(r.Body as Readable, range, r.ContentRange) : (r.Body as Readable);
    // The call's deadline ended with the headers; the caller's signal still cancels the stream.
    if (signal) {
      const onAbort = () => body.destroy(new AppError('cancelled', { path }));
      signal.addEventListener('abort', onAbort, { once: true });
      body.once('close', () => signal.removeEventListener('abort', onAbort));
    }
    return body;
  }

  /**
   * Publishes `body` at `path` atomically (a PUT or a completed multipart
   * upload both replace the object at once). Up to 8 MiB the body is buffered
   * and retried on transient failures; larger bodies stream as multipart and
   * a failure aborts the upload, leaving the old object in place.
   */
  async write(path: string, body: Readable, opts: WriteOptions = {}): Promise<Entry> {
    await checkWritable(this.api, this.keys, path, opts.overwrite !== false, opts.signal);
    const key = this.keys.file(path);
    const mime = opts.mime ?? mimeOf(path);
    const chunker = new Chunker(body);
    try {
      const first = (await chunker.next(BUFFER_LIMIT)) ?? Buffer.alloc(0);
      if (!(await chunker.atEnd())) {
        await this.multipart.stream(path, first, chunker, { size: opts.size, mime, signal: opts.signal });
      } else {
        await this.api.call(path, opts.signal, (abortSignal) =>
          this.api.client.send(
            new PutObjectCommand({
              Bucket: this.api.bucket,
              Key: key,
              Body: first,
              ContentLength: first.length,
              ContentType: mime,
            }),
            { abortSignal },
          ),
        );
      }
    } catch (e) {
      await chunker.close().catch(() => undefined);
      // Backend errors arrive mapped; a failing body keeps its own error for the caller.
      throw opts.signal?.aborted ? new AppError('cancelled', { path }) : e;
    }
    return headEntry(this.api, key, path);
  }

  /** Writes a marker in each level so every folder of the chain survives its last file. Idempotent; a file in the way → `conflict`. */
  async mkdir(path: string): Promise<void> {
    if (path === '') return;
    const levels = path.split('/').map((_, i, segs) => segs.slice(0, i + 1).join('/'));
    const files = await Promise.all(levels.map((rel) => headOrNull(this.api, this.keys.file(rel), rel)));
    const blocked = files.findIndex(Boolean);
    if (blocked >= 0) throw new AppError('conflict', { path: levels[blocked], reason: 'a file has this name' });
    await Promise.all(levels.map((rel) => this.putMarker(rel)));
  }

  /** Deletes the object, or every key below the folder. Missing → `not_found`. The parent folder stays. */
  async delete(path: string): Promise<void> {
    if (path === '') throw new AppError('permission_denied', { path, reason: 'the storage root cannot be deleted' });
    const kind = await this.kindOf(path);
    if (!kind) throw new AppError('not_found', { path });
    await this.remove(path, kind);
    await this.keepFolder(parentRel(path));
  }

  /** Releases the client's sockets. Idempotent. */
  async close(): Promise<void> {
    this.api.client.destroy();
  }

  /**
   * Everything below `prefix` from flat ListObjectsV2 pages of 1,000 keys (one
   * request per page, however deep the tree); folders are synthesised from key
   * prefixes, each once, before their first descendant. Paths are relative to `prefix`.
   */
  async *walk(prefix: string, signal?: AbortSignal): AsyncIterable<WalkEntry> {
    const base = this.keys.folder(prefix);
    const folders = new Set<string>();
    for await (const o of listKeys(this.api, base, prefix, signal)) {
      const rel = KeyMap.below(base, o.Key ?? '');
      const segs = rel.split('/');
      for (let i = 1; i < segs.length; i++) {
        const dir = segs.slice(0, i).join('/');
        if (dir === '' || folders.has(dir)) continue;
        folders.add(dir);
        yield { ...dirEntry(segs[i - 1]), path: dir };
      }
      if (!isFolderKey(rel) && rel !== '') yield { ...objectEntry(segs[segs.length - 1], o), path: rel };
    }
  }

  /** CopyObject + delete per key; the source's parent folder stays. Target exists and !overwrite → `conflict`. */
  async move(from: string, to: string, opts: { overwrite: boolean }): Promise<void> {
    if (from === to) return;
    const kind = await this.transfer(from, to, opts.overwrite);
    await this.remove(from, kind);
    await this.keepFolder(parentRel(from));
  }

  /** Server-side CopyObject of a file or of every key below a folder. Target exists and !overwrite → `conflict`. */
  async copy(from: string, to: string, opts: { overwrite: boolean; signal?: AbortSignal }): Promise<void> {
    if (from === to) throw new AppError('conflict', { path: to });
    await this.transfer(from, to, opts.overwrite, opts.signal);
  }

  /** A presigned GET with the file name as Content-Disposition. Missing → `not_found`. */
  private async presign(path: string, opts: PresignOptions): Promise<string> {
    const key = this.keys.file(path);
    await headEntry(this.api, key, path);
    const filename = opts.filename ?? baseName(path);
    return getSignedUrl(
      this.api.client,
      new GetObjectCommand({
        Bucket: this.api.bucket,
        Key: key,
        ResponseContentDisposition: contentDisposition(filename, opts.inline ?? false),
        ResponseContentType: opts.mime,
      }),
      { expiresIn: opts.expiresInSeconds },
    );
  }

  private async kindOf(path: string, signal?: AbortSignal): Promise<Kind> {
    if (await headOrNull(this.api, this.keys.file(path), path, signal)) return 'file';
    return (await folderExists(this.api, this.keys, path, signal)) ? 'dir' : null;
  }

  /** Copies `from` to `to` after the checks both verbs share; returns what `from` was. */
  private async transfer(from: string, to: string, overwrite: boolean, signal?: AbortSignal): Promise<'file' | 'dir'> {
    if (from === '' || isWithin(to, from)) throw new AppError('conflict', { path: to, reason: 'a folder cannot go inside itself' });
    const [kind, target, parentOk] = await Promise.all([
      this.kindOf(from, signal),
      this.kindOf(to, signal),
      folderExists(this.api, this.keys, parentRel(to), signal),
    ]);
    if (!kind) throw new AppError('not_found', { path: from });
    if (!parentOk) throw new AppError('not_found', { path: parentRel(to) });
    if (target && !overwrite) throw new AppError('conflict', { path: to });
    // A file replacing a file is one atomic CopyObject; anything else clears the target first.
    if (target && !(target === 'file' && kind === 'file')) await this.remove(to, target);
    if (kind === 'file') {
      await this.copyKey(this.keys.file(from), this.keys.file(to), from, signal);
      return kind;
    }
    const src = this.keys.folder(from);
    const dst = this.keys.folder(to);
    await this.forEachBatch(src, from, COPY_CONCURRENCY, signal, (batch) =>
      Promise.all(batch.map((key) => this.copyKey(key, dst + KeyMap.below(src, key), from, signal))),
    );
    return kind;
  }

  private async copyKey(srcKey: string, dstKey: string, rel: string, signal?: AbortSignal): Promise<void> {
    await this.api.call(rel, signal, (abortSignal) =>
      this.api.client.send(
        new CopyObjectCommand({
          Bucket: this.api.bucket,
          Key: dstKey,
          CopySource: copySource(this.api.bucket, srcKey),
        }),
        { abortSignal },
      ),
    );
  }

  /** Deletes the object at `path`, or every key below the folder with DeleteObjects batches of 1,000. */
  private async remove(path: string, kind: 'file' | 'dir'): Promise<void> {
    if (kind === 'file') {
      const key = this.keys.file(path);
      await this.api.call(path, undefined, (abortSignal) =>
        this.api.client.send(new DeleteObjectCommand({ Bucket: this.api.bucket, Key: key }), { abortSignal }),
      );
      return;
    }
    await this.forEachBatch(this.keys.folder(path), path, PAGE_KEYS, undefined, async (batch) => {
      const r = await this.api.call(path, undefined, (abortSignal) =>
        this.api.client.send(
          new DeleteObjectsCommand({
            Bucket: this.api.bucket,
            Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true },
          }),
          { abortSignal },
        ),
      );
      const failed = r.Errors?.[0];
      if (failed) throw new AppError('storage_unreachable', { reason: `${failed.Code}: ${failed.Message}` }, undefined, `s3: could not delete ${failed.Key}`);
    });
  }

  /**
   * Runs `fn` on the keys below `prefix`, `size` at a time, one listing page
   * after the other. Continuation tokens are key positions, so deleting the
   * keys of a page before fetching the next one skips nothing.
   */
  private async forEachBatch(
    prefix: string,
    rel: string,
    size: number,
    signal: AbortSignal | undefined,
    fn: (keys: string[]) => Promise<unknown>,
  ): Promise<void> {
    for await (const page of listPages(this.api, prefix, rel, { signal })) {
      const keys = (page.Contents ?? []).map((o) => o.Key ?? '');
      for (let i = 0; i < keys.length; i += size) await fn(keys.slice(i, i + size));
    }
  }

  /** Writes the folder's marker when it would otherwise vanish with its last key. */
  private async keepFolder(rel: string): Promise<void> {
    if (rel !== '' && !(await folderExists(this.api, this.keys, rel))) await this.putMarker(rel);
  }

  private async putMarker(rel: string): Promise<void> {
    const key = this.keys.marker(rel);
    await this.api.call(rel, undefined, (abortSignal) =>
      this.api.client.send(
        new PutObjectCommand({
          Bucket: this.api.bucket,
          Key: key,
          Body: Buffer.alloc(0),
          ContentLength: 0,
        }),
        { abortSignal },
      ),
    );
  }
}
