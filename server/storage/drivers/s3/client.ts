/**
 * The one S3 client of a storage and the way every call goes through it:
 * bounded by socket timeouts in the request handler and by an overall
 * deadline, cancellable by the caller, errors mapped to the driver contract.
 */
import type { RequestSink } from '../../meter';
import { S3Client } from '@aws-sdk/client-s3';
import type { S3Settings } from './config';
import { toAppError } from './errors';

/** Time limits and retries; the defaults suit a WAN link, tests shrink them. */
export interface S3Tuning {
  /** TCP connect. */
  connectTimeoutMs: number;
  /** One request until its response headers (an 8 MiB part must upload within it). */
  requestTimeoutMs: number;
  /** Socket silence, also while a body streams. */
  idleTimeoutMs: number;
  /** Whole call including the SDK's retries (not the streaming of a read body). */
  callTimeoutMs: number;
  /** Attempts per request; buffered bodies are replayed on transient failures. */
  maxAttempts: number;
}

export const DEFAULT_TUNING: S3Tuning = {
  connectTimeoutMs: 5_000,
  requestTimeoutMs: 60_000,
  idleTimeoutMs: 30_000,
  callTimeoutMs: 120_000,
  maxAttempts: 3,
};

/** Region `auto` signs as us-east-1, which R2 and most S3-compatible stores accept. */
const signingRegion = (region: string): string => (region === 'auto' ? 'us-east-1' : region);

export function createS3Client(s: S3Settings, tuning: S3Tuning): S3Client {
  return new S3Client({
    region: signingRegion(s.region),
    endpoint: s.endpoint,
    forcePathStyle: s.pathStyle,
    credentials: s.credentials,
    followRegionRedirects: !s.endpoint,
    maxAttempts: tuning.maxAttempts,
    // Flexible checksums (CRC32 trailers, checksum query params in presigned
    // URLs) break many S3-compatible stores and browser part uploads.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: {
      connectionTimeout: tuning.connectTimeoutMs,
      requestTimeout: tuning.requestTimeoutMs,
      throwOnRequestTimeout: true,
      socketTimeout: tuning.idleTimeoutMs,
    },
  });
}

/** Connection failures with no answer: the request never reached the backend (a keep-alive socket it had just closed, a refused connect). */
const NEVER_SENT = new Set(['ECONNRESET', 'EPIPE', 'ECONNREFUSED']);

/**
 * Counts each HTTP attempt (retries included: each one is billed) by class.
 * The deserialize step runs inside the retry loop, once per request sent. An
 * attempt is counted once it ends, unless it never reached the backend: the
 * SDK retries a request written to a socket the backend closed as idle, and
 * the backend saw (and bills) only the retry.
 */
export function countS3Requests(client: S3Client, count: RequestSink): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const cmd = (context.commandName ?? '').replace(/Command$/, '');
      const cls = cmd.startsWith('List') ? 'list' : cmd === 'HeadObject' || cmd === 'HeadBucket' ? 'head' : cmd === 'GetObject' ? 'get' : 'put';
      try {
        const out = await next(args);
        count(cls);
        return out;
      } catch (e) {
        const err = e as { code?: string; $metadata?: { httpStatusCode?: number } };
        if (err.$metadata?.httpStatusCode || !NEVER_SENT.has(err.code ?? '')) count(cls);
        throw e;
      }
    },
    { step: 'deserialize', name: 'filedockRequestMeter' },
  );
}

export class S3Api {
  constructor(
    readonly client: S3Client,
    readonly bucket: string,
    readonly tuning: S3Tuning,
  ) {}

  /**
   * Runs one SDK call on `path`. `fn` receives the AbortSignal to hand to
   * `client.send`; it fires at the deadline or when `signal` does. Errors come
   * back as AppErrors (`storage_unreachable` with the reason, `not_found`, ...).
   * The deadline stops once `fn` resolves, so a returned body keeps streaming.
   */
  async call<T>(path: string, signal: AbortSignal | undefined, fn: (abortSignal: AbortSignal) => Promise<T>): Promise<T> {
    const ctrl = new AbortController();
    const deadline = setTimeout(() => ctrl.abort(), this.tuning.callTimeoutMs);
    const onAbort = () => ctrl.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      if (signal?.aborted) ctrl.abort();
      return await fn(ctrl.signal);
    } catch (e) {
      throw toAppError(e, path, { deadlineMs: this.tuning.callTimeoutMs, callerSignal: signal });
    } finally {
      clearTimeout(deadline);
      signal?.removeEventListener('abort', onAbort);
    }
  }
}
