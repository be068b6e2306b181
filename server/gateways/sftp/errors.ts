/**
 * The one table from `AppError` codes to SFTPv3 status codes. SFTPv3 has no
 * "already exists" or "quota" codes: those are FAILURE with the code as the
 * message, which OpenSSH's client prints after the path. Anything not an
 * AppError is FAILURE with a generic message (internals never reach a client).
 */
import ssh2 from 'ssh2';
import { isAppError, type ErrorCode } from '../../errors';
import { lockSentence } from '../lock-sentence';

const S = ssh2.utils.sftp.STATUS_CODE;

const TABLE: Partial<Record<ErrorCode, number>> = {
  not_found: S.NO_SUCH_FILE,
  gone: S.NO_SUCH_FILE,
  forbidden: S.PERMISSION_DENIED,
  permission_denied: S.PERMISSION_DENIED,
  read_only: S.PERMISSION_DENIED,
  encrypted: S.PERMISSION_DENIED,
  not_encrypted: S.PERMISSION_DENIED,
  unauthenticated: S.PERMISSION_DENIED,
  locked: S.PERMISSION_DENIED,
  bad_path: S.BAD_MESSAGE,
  bad_name: S.BAD_MESSAGE,
  unsupported: S.OP_UNSUPPORTED,
  method_not_allowed: S.OP_UNSUPPORTED,
  storage_unreachable: S.NO_CONNECTION,
  storage_unavailable: S.NO_CONNECTION,
};

/** The status code and message an SFTP client gets for `e`. */
export function sftpStatus(e: unknown): { code: number; message: string } {
  if (!isAppError(e)) return { code: S.FAILURE, message: 'internal error' };
  return { code: TABLE[e.code] ?? S.FAILURE, message: lockSentence(e) ?? e.code };
}
