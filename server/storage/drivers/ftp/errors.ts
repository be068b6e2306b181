/**
 * FTP replies and transport failures turned into the driver contract's codes.
 * FTP's 550 means "not found" for a lookup but "refused" for a create, so the
 * caller says which one it expects.
 */
import { FTPError } from 'basic-ftp';
import { AppError, isAppError } from '../../../errors';
import { isProgrammingError, messageOf, unreachable } from '../remote/errors';

/** The FTP reply code of a server refusal, if `e` is one. */
export const replyCode = (e: unknown): number | undefined => (e instanceof FTPError ? e.code : undefined);

/** Maps any failure of one FTP exchange; `on550` is what "550 unavailable" means for this call. */
export function ftpError(e: unknown, path: string, on550: 'not_found' | 'permission_denied' = 'not_found'): Error {
  if (isAppError(e)) return e;
  const code = replyCode(e);
  if (code === undefined) return isProgrammingError(e) ? (e as Error) : unreachable(messageOf(e));
  switch (code) {
    case 530:
    case 331:
    case 332:
      return unreachable(`login refused: ${messageOf(e)}`);
    case 550:
      return on550 === 'not_found'
        ? new AppError('not_found', { path })
        : new AppError('permission_denied', { path, permission: 'backend', source: 'backend' });
    case 553:
      return new AppError('name_not_allowed', { reason: 'backend' }, { code: 'NAME_NOT_ALLOWED', reason: 'backend' });
    case 452:
    case 552:
      return new AppError('insufficient_storage', { path }, { reason: 'no_space' }, messageOf(e));
    default:
      return unreachable(messageOf(e));
  }
}
