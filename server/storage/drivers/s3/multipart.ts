/**
 * S3 multipart uploads, both as the driver's resumable-upload capability
 * (parts PUT by the browser to presigned URLs, or through the service) and
 * as the streaming path of `write` for bodies over the buffering limit.
 * Nothing is visible at the key until CompleteMultipartUpload.
 */
import { AbortMultipartUploadCommand, CompleteMultipartUploadCommand, CreateMultipartUploadCommand, UploadPartCommand } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { Readable } from 'node:stream';
import { AppError } from '../../../errors';
import type { Entry, MultipartCapability } from '../../types';
import { Chunker } from './chunker';
import type { S3Api } from './client';
import { bareEtag, type KeyMap } from './keys';
import { checkWritable, headEntry } from './objects';

/** S3 allows at most this many parts per upload. */
const MAX_PARTS = 10_000;
/** Parts uploaded concurrently by a streamed write; memory is about (this + 1) parts. */
const PARTS_IN_FLIGHT = 2;

interface Handle {
  key: string;
  uploadId: string;
  /** Relative path, for entries and error messages. */
  rel: string;
}

export type PartEtag = { part: number; etag: string };

const parseHandle = (handle: string): Handle => {
  try {
    const h = JSON.parse(handle) as Partial<Handle>;
    if (typeof h.key === 'string' && typeof h.uploadId === 'string' && typeof h.rel === 'string') return h as Handle;
  } catch {
    // falls through to the refusal below
  }
  throw new AppError('bad_id', { field: 'handle' });
};

/** The part size a streamed body of `size` bytes needs to fit in 10,000 parts. */
export const partSizeFor = (size: number | undefined, min: number): number => Math.max(min, Math.ceil((size ?? 0) / MAX_PARTS));

export class S3Multipart implements MultipartCapability {
  readonly presigned = true;

  constructor(
    private readonly api: S3Api,
    private readonly keys: KeyMap,
  ) {}

  /** Starts an upload to `path`; its parent must exist (`not_found`). Handle: JSON `{key, uploadId, rel}`. */
  async init(path: string, opts: { size: number; partSize: number; mime?: string }): Promise<{ handle: string }> {
    if (Math.ceil(opts.size / opts.partSize) > MAX_PARTS)
      throw new AppError('validation_failed', { field: 'chunk_size', reason: `more than ${MAX_PARTS} parts` }, { field: 'chunk_size' });
    await checkWritable(this.api, this.keys, path, true);
    return { handle: JSON.stringify(await this.create(path, opts.mime)) };
  }

  /** Uploads part `part` (1-based) from `body` of exactly `size` bytes. Re-sending a part replaces it. */
  async putPart(handle: string, part: number, body: Readable, size: number, signal?: AbortSignal): Promise<{ etag: string }> {
    const h = parseHandle(handle);
    const chunker = new Chunker(body);
    const bytes = (await chunker.next(size)) ?? Buffer.alloc(0);
    const extra = await chunker.next(1);
    if (bytes.length !== size || extra) throw new AppError('bad_body', { expected: size }, undefined, `s3: part ${part} is not ${size} bytes`);
    return { etag: await this.uploadPart(h, part, bytes, signal) };
  }

  /** A presigned UploadPart URL; the browser reads the part's ETag from the response header. */
  async presignPart(handle: string, part: number, expiresInSeconds: number): Promise<string> {
    const h = parseHandle(handle);
    return getSignedUrl(this.api.client, new UploadPartCommand({ Bucket: this.api.bucket, Key: h.key, UploadId: h.uploadId, PartNumber: part }), {
      expiresIn: expiresInSeconds,
    });
  }

  /** Publishes the object from the listed parts (etags as the client saw them, quotes optional). */
  async complete(handle: string, parts: PartEtag[]): Promise<Entry> {
    const h = parseHandle(handle);
    await this.completeUpload(h, parts);
    return headEntry(this.api, h.key, h.rel);
  }

  /** Discards the upload's parts. Idempotent; best effort, since some stores refuse it (s3rver answers 405). */
  async abort(handle: string): Promise<void> {
    await this.abortUpload(parseHandle(handle));
  }

  /**
   * Streams the rest of `chunker` after the already-read `first` part to `rel`
   * as a multipart upload, two parts in flight. On any failure (body error,
   * backend error, `signal`) the upload is aborted and nothing is published.
   */
  async stream(rel: string, first: Buffer, chunker: Chunker, opts: { size?: number; mime?: string; signal?: AbortSignal }): Promise<void> {
    const h = await this.create(rel, opts.mime, opts.signal);
    const partSize = partSizeFor(opts.size, first.length);
    const ctrl = new AbortController();
    const onAbort = () => ctrl.abort();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    const etags: PartEtag[] = [];
    const inFlight = new Set<Promise<void>>();
    let failure: unknown;
    try {
      let part = 0;
      for (let bytes: Buffer | null = first; bytes; bytes = failure ? null : await chunker.next(partSize)) {
        const n = ++part;
        if (n > MAX_PARTS) throw new AppError('payload_too_large', { max: MAX_PARTS * partSize });
        const p = this.uploadPart(h, n, bytes, ctrl.signal)
          .then((etag) => void etags.push({ part: n, etag }))
          .catch((e) => {
            failure ??= e;
            ctrl.abort();
          })
          .finally(() => inFlight.delete(p));
        inFlight.add(p);
        if (inFlight.size >= PARTS_IN_FLIGHT) await Promise.race(inFlight);
      }
      await Promise.all(inFlight);
      if (failure) throw failure;
      if (opts.signal?.aborted) throw new AppError('cancelled', { path: rel });
      await this.completeUpload(
        h,
        etags.sort((a, b) => a.part - b.part),
        opts.signal,
      );
    } catch (e) {
      ctrl.abort();
      await Promise.allSettled(inFlight);
      await chunker.close().catch(() => undefined);
      await this.abortUpload(h);
      throw opts.signal?.aborted ? new AppError('cancelled', { path: rel }) : e;
    } finally {
      opts.signal?.removeEventListener('abort', onAbort);
    }
  }

  private async create(rel: string, mime: string | undefined, signal?: AbortSignal): Promise<Handle> {
    const key = this.keys.file(rel);
    const r = await this.api.call(rel, signal, (abortSignal) =>
      this.api.client.send(new CreateMultipartUploadCommand({ Bucket: this.api.bucket, Key: key, ContentType: mime }), { abortSignal }),
    );
    if (!r.UploadId) throw new AppError('internal', {}, undefined, 's3: CreateMultipartUpload returned no UploadId');
    return { key, uploadId: r.UploadId, rel };
  }

  private async uploadPart(h: Handle, part: number, bytes: Buffer, signal?: AbortSignal): Promise<string> {
    const r = await this.api.call(h.rel, signal, (abortSignal) =>
      this.api.client.send(
        new UploadPartCommand({
          Bucket: this.api.bucket,
          Key: h.key,
          UploadId: h.uploadId,
          PartNumber: part,
          Body: bytes,
          ContentLength: bytes.length,
        }),
        { abortSignal },
      ),
    );
    return bareEtag(r.ETag);
  }

  private async completeUpload(h: Handle, parts: PartEtag[], signal?: AbortSignal): Promise<void> {
    await this.api.call(h.rel, signal, (abortSignal) =>
      this.api.client.send(
        new CompleteMultipartUploadCommand({
          Bucket: this.api.bucket,
          Key: h.key,
          UploadId: h.uploadId,
          MultipartUpload: { Parts: parts.map((p) => ({ PartNumber: p.part, ETag: `"${bareEtag(p.etag)}"` })) },
        }),
        { abortSignal },
      ),
    );
  }

  private async abortUpload(h: Handle): Promise<void> {
    try {
      await this.api.call(h.rel, undefined, (abortSignal) =>
        this.api.client.send(new AbortMultipartUploadCommand({ Bucket: this.api.bucket, Key: h.key, UploadId: h.uploadId }), { abortSignal }),
      );
    } catch (e) {
      // Unpublished parts are invisible; a store that refuses the abort (s3rver: 405)
      // only keeps them until its lifecycle rules expire incomplete uploads.
      if (!(e instanceof AppError && e.code === 'not_found')) console.warn(`[s3] abort of upload to ${h.key} failed (best effort): ${(e as Error).message}`);
    }
  }
}
