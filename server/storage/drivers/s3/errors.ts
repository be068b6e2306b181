/**
 * Turns what the AWS SDK throws into the driver contract's AppErrors. The
 * backend's own sentence travels in `params.reason` so an admin sees why a
 * storage is unreachable (wrong key, missing bucket, refused connection).
 */
import { AppError } from '../../../errors';

interface SdkError {
  name?: string;
  code?: string;
  message?: string;
  cause?: unknown;
  $metadata?: { httpStatusCode?: number };
}

/** Names S3 gives to a missing key (HEAD answers a bare 404 `NotFound`). */
const MISSING = new Set(['NoSuchKey', 'NotFound', 'NoSuchUpload']);

/** Answers that mean the whole storage is unusable, not one path. */
const SESSION_REFUSED = new Set([
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'NoSuchBucket',
  'InvalidToken',
  'ExpiredToken',
  'AuthorizationHeaderMalformed',
  'PermanentRedirect',
  'CredentialsProviderError',
  'InvalidBucketName',
]);

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNABORTED',
  'ERR_STREAM_PREMATURE_CLOSE',
  'UND_ERR_SOCKET',
]);

/** The innermost error that names a system code (the SDK wraps some socket errors). */
function systemCode(err: SdkError, depth = 0): string | undefined {
  if (err.code && NETWORK_CODES.has(err.code)) return err.code;
  const cause = err.cause as SdkError | undefined;
  return cause && depth < 5 ? systemCode(cause, depth + 1) : undefined;
}

const unreachable = (reason: string, detail?: string) => new AppError('storage_unreachable', { reason }, undefined, detail ?? `s3: ${reason}`);

/**
 * Maps any error from an S3 call on `path` to an AppError. `deadlineMs` is the
 * call's bound, quoted when the call was cut by it; `callerSignal` tells a
 * cancellation by the caller apart from that deadline.
 */
export function toAppError(e: unknown, path: string, opts: { deadlineMs?: number; callerSignal?: AbortSignal } = {}): AppError {
  if (e instanceof AppError) return e;
  const err = (e ?? {}) as SdkError;
  const name = err.name ?? '';
  const status = err.$metadata?.httpStatusCode;
  if (opts.callerSignal?.aborted) return new AppError('cancelled', { path });
  if (name === 'AbortError') return unreachable(`timed out after ${Math.round((opts.deadlineMs ?? 0) / 1000)}s`);
  if (name === 'TimeoutError') return unreachable(`timed out: ${err.message ?? ''}`.trim());
  if (MISSING.has(name) || (status === 404 && name !== 'NoSuchBucket')) return new AppError('not_found', { path });
  if (name === 'InvalidRange' || status === 416) return new AppError('range_not_satisfiable', { path });
  if (SESSION_REFUSED.has(name)) return unreachable(err.message && err.message !== name ? `${name}: ${err.message}` : name);
  if (name === 'AccessDenied' || status === 403) return new AppError('permission_denied', { path, reason: err.message ?? name });
  if (name === 'KeyTooLongError') return new AppError('name_too_long', { max: 1024 });
  if (name === 'InvalidObjectName') return new AppError('name_not_allowed', { reason: 'backend' }, { code: 'NAME_NOT_ALLOWED', reason: 'backend' });
  const code = systemCode(err);
  if (code) return unreachable(`${code}: ${err.message ?? code}`);
  if (status !== undefined && status >= 500) return unreachable(`${name || 'HTTP ' + status}: ${err.message ?? ''}`.trim());
  return new AppError('internal', {}, undefined, `s3 ${path}: ${name} ${err.message ?? String(e)}`);
}
