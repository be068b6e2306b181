/**
 * Maps Node filesystem errors to the driver contract's AppError codes, so
 * callers never see an errno.
 */
import { AppError, isAppError } from '../../../errors';

const MAX_NAME_BYTES = 255;

/** The contract's error for `e` met while working on `rel`; unknown errors pass through unchanged. */
export function fsError(e: unknown, rel: string): unknown {
  if (isAppError(e)) return e;
  const err = e as NodeJS.ErrnoException;
  switch (err?.code) {
    case 'ENOENT':
    case 'ENOTDIR':
      return new AppError('not_found', { path: rel }, undefined, err.message);
    case 'EEXIST':
    case 'ENOTEMPTY':
      return new AppError('conflict', { path: rel }, undefined, err.message);
    case 'EISDIR':
      return new AppError('conflict', { path: rel, reason: 'is a folder' }, undefined, err.message);
    case 'EINVAL':
      // rename() answers EINVAL when a folder would move into itself.
      return new AppError('conflict', { path: rel, reason: 'invalid target' }, undefined, err.message);
    case 'EACCES':
    case 'EPERM':
    case 'ELOOP':
      return new AppError('permission_denied', { path: rel }, undefined, err.message);
    case 'EROFS':
      return new AppError('read_only', { path: rel }, undefined, err.message);
    case 'ENAMETOOLONG':
      return new AppError('name_too_long', { max: MAX_NAME_BYTES }, { max: MAX_NAME_BYTES }, err.message);
    case 'ENOSPC':
    case 'EDQUOT':
      return new AppError('insufficient_storage', { path: rel }, { reason: 'no_space' }, err.message);
    case 'ABORT_ERR':
      return new AppError('cancelled', {}, undefined, err.message);
    default:
      return e;
  }
}

/** Runs `fn`, rethrowing its filesystem errors mapped for `rel`. */
export async function mapFs<T>(rel: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw fsError(e, rel);
  }
}
