/**
 * A request body as the S3 gateway writes it: decoded from `aws-chunked`
 * (each chunk's signature checked before its bytes go on), and checked
 * against what the request promised (the signed SHA-256, Content-MD5, the
 * length). A check that fails errors the stream before its end, so the
 * atomic write behind it never publishes the object (nothing is visible,
 * nothing announced). The MD5 of the bytes is kept for the ETag.
 */
import { createHash, type Hash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { pipeline, Transform, type Readable, type TransformCallback } from 'node:stream';
import { S3Error } from './errors';
import { chunkSignature, sameHex, UNSIGNED, type SignedClaim } from './sigv4';

/** The largest chunk of an aws-chunked body held for its signature check. */
const MAX_CHUNK = 16 * 1024 * 1024;
const MAX_LINE = 4096;

export interface Body {
  stream: Readable;
  /** The decoded length when the request declared it. */
  size: number | undefined;
  /** Hex MD5 of what went through (complete once the stream ended). */
  md5(): string;
}

/** The decoded, verified body of `req` signed as `claim` (signing key `key`). */
export function requestBody(req: IncomingMessage, claim: SignedClaim, key: Buffer): Body {
  const mode = claim.payloadHash;
  const streaming = mode.startsWith('STREAMING-');
  if (streaming && !/^STREAMING-(AWS4-HMAC-SHA256-PAYLOAD|UNSIGNED-PAYLOAD-TRAILER|AWS4-HMAC-SHA256-PAYLOAD-TRAILER)$/.test(mode)) {
    throw new S3Error('NotImplemented', `Payload mode ${mode} is not supported.`);
  }
  if (mode !== UNSIGNED && !streaming && !/^[0-9a-f]{64}$/.test(mode))
    throw new S3Error('InvalidArgument', 'x-amz-content-sha256 must be UNSIGNED-PAYLOAD, a STREAMING-* mode or a hex SHA-256.');
  const declared = streaming ? req.headers['x-amz-decoded-content-length'] : req.headers['content-length'];
  const size = declared === undefined ? undefined : Number(declared);
  if (size !== undefined && (!Number.isSafeInteger(size) || size < 0)) throw new S3Error('InvalidArgument', 'The content length is not valid.');
  const md5 = contentMd5(req.headers['content-md5']);
  const checks = new Checks({ sha256: /^[0-9a-f]{64}$/.test(mode) ? mode : undefined, md5, size });
  const stages = streaming ? [req, new AwsChunked(mode.includes('HMAC') ? { claim, key } : null), checks] : [req, checks];
  // A failure anywhere (client gone, a check) destroys `checks` with it: its reader sees the error.
  pipeline(stages, () => undefined);
  return { stream: checks, size, md5: () => checks.md5 };
}

function contentMd5(v: string | string[] | undefined): string | undefined {
  if (v === undefined) return undefined;
  const b = Buffer.from(String(v), 'base64');
  if (b.length !== 16) throw new S3Error('InvalidDigest');
  return b.toString('hex');
}

/** Passes bytes on, hashing and counting them; fails at the end when a promise was broken. */
class Checks extends Transform {
  private h256: Hash | null;
  private hmd5 = createHash('md5');
  private n = 0;
  md5 = '';

  constructor(private want: { sha256?: string; md5?: string; size?: number }) {
    super();
    this.h256 = want.sha256 ? createHash('sha256') : null;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.n += chunk.length;
    if (this.want.size !== undefined && this.n > this.want.size) return cb(new S3Error('IncompleteBody', 'The body is longer than its declared length.'));
    this.h256?.update(chunk);
    this.hmd5.update(chunk);
    cb(null, chunk);
  }

  override _flush(cb: TransformCallback): void {
    this.md5 = this.hmd5.digest('hex');
    if (this.want.size !== undefined && this.n !== this.want.size) return cb(new S3Error('IncompleteBody'));
    if (this.h256 && !sameHex(this.h256.digest('hex'), this.want.sha256!)) return cb(new S3Error('XAmzContentSHA256Mismatch'));
    if (this.want.md5 && this.md5 !== this.want.md5) return cb(new S3Error('BadDigest'));
    cb();
  }
}

/**
 * Decodes `aws-chunked`: `<hex size>[;chunk-signature=<sig>]\r\n<bytes>\r\n`
 * … `0[;…]\r\n[trailers]\r\n`. With a signing key each chunk's signature is
 * checked (chained from the request's seed signature) before it passes on.
 */
class AwsChunked extends Transform {
  private buf: Buffer = Buffer.alloc(0);
  private state: 'head' | 'data' | 'crlf' | 'trailer' | 'done' = 'head';
  private need = 0;
  private sig = '';
  private parts: Buffer[] = [];
  private previous: string;

  constructor(private signed: { claim: SignedClaim; key: Buffer } | null) {
    super();
    this.previous = signed?.claim.signature ?? '';
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    try {
      this.drain();
      cb();
    } catch (e) {
      cb(e as Error);
    }
  }

  override _flush(cb: TransformCallback): void {
    cb(this.state === 'done' && this.buf.length === 0 ? null : new S3Error('IncompleteBody', 'The aws-chunked body ended early.'));
  }

  private drain(): void {
    for (;;) {
      if (this.state === 'data') {
        const take = Math.min(this.need, this.buf.length);
        if (take === 0) return;
        this.parts.push(this.buf.subarray(0, take));
        this.buf = this.buf.subarray(take);
        this.need -= take;
        if (this.need > 0) return;
        this.endChunk();
        this.state = 'crlf';
        continue;
      }
      if (this.state === 'done') {
        if (this.buf.length) throw new S3Error('IncompleteBody', 'Bytes after the last chunk.');
        return;
      }
      const eol = this.buf.indexOf('\r\n');
      if (eol < 0) {
        if (this.buf.length > MAX_LINE) throw new S3Error('InvalidRequest', 'An aws-chunked line is too long.');
        return;
      }
      const line = this.buf.subarray(0, eol).toString('latin1');
      this.buf = this.buf.subarray(eol + 2);
      if (this.state === 'crlf') {
        if (line !== '') throw new S3Error('InvalidRequest', 'A chunk is longer than its size.');
        this.state = 'head';
      } else if (this.state === 'trailer') {
        if (line === '') this.state = 'done';
      } else this.head(line);
    }
  }

  private head(line: string): void {
    const m = /^([0-9a-fA-F]{1,8})(?:;chunk-signature=([0-9a-f]{64}))?$/.exec(line);
    if (!m) throw new S3Error('InvalidRequest', 'A malformed aws-chunked chunk header.');
    if (this.signed && !m[2]) throw new S3Error('SignatureDoesNotMatch', 'A chunk has no signature.');
    this.need = parseInt(m[1], 16);
    this.sig = m[2] ?? '';
    if (this.need > MAX_CHUNK) throw new S3Error('InvalidRequest', 'An aws-chunked chunk is larger than 16 MiB.');
    if (this.need > 0) {
      this.state = 'data';
      return;
    }
    this.endChunk();
    this.state = 'trailer';
  }

  /** Checks the chunk just read against its signature, then lets its bytes go. */
  private endChunk(): void {
    const data = this.parts.length === 1 ? this.parts[0] : Buffer.concat(this.parts);
    this.parts = [];
    if (this.signed) {
      const want = chunkSignature(this.signed.key, this.signed.claim, this.previous, createHash('sha256').update(data).digest('hex'));
      if (!sameHex(want, this.sig)) throw new S3Error('SignatureDoesNotMatch', 'A chunk signature does not match.');
      this.previous = this.sig;
    }
    if (data.length) this.push(data);
  }
}
