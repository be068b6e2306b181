/**
 * smbclient reports failures as NT_STATUS_* words on its own lines; this maps
 * them onto the driver contract's codes.
 */
import { AppError } from '../../../errors';

const BY_STATUS: Record<string, 'not_found' | 'conflict' | 'permission_denied' | 'name_not_allowed'> = {
  NT_STATUS_OBJECT_NAME_NOT_FOUND: 'not_found',
  NT_STATUS_OBJECT_PATH_NOT_FOUND: 'not_found',
  NT_STATUS_NO_SUCH_FILE: 'not_found',
  NT_STATUS_NOT_A_DIRECTORY: 'not_found',
  NT_STATUS_FILE_IS_A_DIRECTORY: 'not_found',
  NT_STATUS_DELETE_PENDING: 'not_found',
  NT_STATUS_OBJECT_NAME_COLLISION: 'conflict',
  NT_STATUS_DIRECTORY_NOT_EMPTY: 'conflict',
  NT_STATUS_ACCESS_DENIED: 'permission_denied',
  NT_STATUS_SHARING_VIOLATION: 'permission_denied',
  NT_STATUS_CANNOT_DELETE: 'permission_denied',
  NT_STATUS_MEDIA_WRITE_PROTECTED: 'permission_denied',
  NT_STATUS_OBJECT_NAME_INVALID: 'name_not_allowed',
  NT_STATUS_OBJECT_PATH_SYNTAX_BAD: 'name_not_allowed',
};

/**
 * The first NT_STATUS word of smbclient's output, or null. Listing rows start
 * with spaces and folder headers of a recursive listing with `\`, so a file
 * that happens to be named NT_STATUS_... is never mistaken for a failure.
 */
export function findStatus(output: string): string | null {
  for (const line of output.split('\n')) {
    if (line === '' || line[0] === ' ' || line[0] === '\t' || line[0] === '\\') continue;
    const m = /NT_STATUS_[A-Z0-9_]+/.exec(line);
    if (m && m[0] !== 'NT_STATUS_OK') return m[0];
  }
  return null;
}

/**
 * The AppError for a status. Everything that is not about one path (logon
 * failure, refused connection, missing share, dropped session, unknown) is
 * `storage_unreachable` carrying the status as the reason.
 */
export function statusError(status: string, path?: string): AppError {
  const code = BY_STATUS[status];
  if (!code) return new AppError('storage_unreachable', { reason: status }, { status });
  if (code === 'name_not_allowed') return new AppError(code, { reason: status }, { code: 'NAME_NOT_ALLOWED', reason: status });
  return new AppError(code, path === undefined ? {} : { path }, { status });
}
