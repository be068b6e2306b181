/**
 * WebDAV answers and transport failures turned into the driver contract's
 * codes (see storage/types.ts).
 */
import { AppError, isAppError } from '../../../errors';
import { isNetworkError, isProgrammingError, messageOf, unreachable } from '../remote/errors';

/** What the caller knows about why a request ended: its own timeout or the caller's signal. */
export interface FailureContext {
  path: string;
  timedOut?: boolean;
  cancelled?: boolean;
  timeoutMs: number;
}

/** The HTTP status a webdav-client error carries, if any. */
export const statusOf = (e: unknown): number | undefined => {
  const s = (e as { status?: unknown } | null)?.status;
  return typeof s === 'number' ? s : undefined;
};

/** Maps any failure of one WebDAV call to an AppError; programming errors pass through untouched. */
export function davError(e: unknown, ctx: FailureContext): Error {
  if (isAppError(e)) return e;
  if (ctx.cancelled) return new AppError('cancelled');
  if (ctx.timedOut) return unreachable(`no answer within ${ctx.timeoutMs / 1000}s`);
  releaseBody(e);
  const status = statusOf(e);
  if (status !== undefined) return fromStatus(status, e, ctx.path);
  if (isNetworkError(e)) return unreachable(messageOf(e));
  if (isProgrammingError(e)) return e as Error;
  return unreachable(messageOf(e));
}

function fromStatus(status: number, e: unknown, path: string): AppError {
  const text = (e as { response?: { statusText?: string } }).response?.statusText ?? '';
  switch (status) {
    case 401:
      return unreachable(`authentication refused (HTTP 401${text ? ` ${text}` : ''})`);
    case 403:
      return new AppError('permission_denied', { path, source: 'backend' });
    case 404:
    case 409: // the parent collection is missing (RFC 4918 9.7.1, 9.3.1)
      return new AppError('not_found', { path });
    case 400:
    case 414:
      return new AppError('name_not_allowed', { reason: 'backend' }, { code: 'NAME_NOT_ALLOWED', reason: 'backend' });
    case 412:
      return new AppError('conflict', { path });
    case 416:
      return new AppError('range_not_satisfiable', { path });
    case 423:
      return new AppError('locked', { path, reason: 'backend' });
    case 507:
      return new AppError('insufficient_storage', { path }, { reason: 'no_space' });
    default:
      return unreachable(`HTTP ${status}${text ? ` ${text}` : ''}`);
  }
}

/** An unread error body pins its keep-alive socket; call this on every error answer the caller absorbs. */
export function releaseBody(e: unknown): void {
  const body = (e as { response?: { body?: { resume?: () => void } } } | null)?.response?.body;
  body?.resume?.();
}
