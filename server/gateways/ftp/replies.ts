/**
 * The one table from `AppError` codes to FTP replies (RFC 959 / 2228 / 3659).
 * Refusals of a path are 550 (the "FTP 550"), names the storage will
 * not take 553, space 552, a storage or database that is away 451 (the client
 * may retry), a sign-in refusal 530. The text is short and fixed (a file an
 * app locked says which app, why and until when): nothing of an error's
 * internals reaches the client.
 */
import { isAppError, type ErrorCode } from '../../errors';
import { lockSentence } from '../lock-sentence';

export interface Reply {
  code: number;
  text: string;
}

const TABLE: Partial<Record<ErrorCode, Reply>> = {
  not_found: { code: 550, text: 'No such file or directory' },
  forbidden: { code: 550, text: 'Permission denied' },
  permission_denied: { code: 550, text: 'Permission denied' },
  read_only: { code: 550, text: 'Permission denied: the storage is read-only' },
  encrypted: { code: 550, text: 'Permission denied: an encrypted folder is read only here' },
  not_encrypted: { code: 550, text: 'Permission denied: an encrypted folder is read only here' },
  conflict: { code: 550, text: 'File exists' },
  name_taken: { code: 550, text: 'File exists' },
  locked: { code: 550, text: 'File is locked' },
  bad_path: { code: 553, text: 'File name not allowed' },
  bad_name: { code: 553, text: 'File name not allowed' },
  name_not_allowed: { code: 553, text: 'File name not allowed' },
  name_too_long: { code: 553, text: 'File name too long' },
  reserved_name: { code: 553, text: 'File name reserved' },
  quota_exceeded: { code: 552, text: 'Quota exceeded' },
  insufficient_storage: { code: 552, text: 'Not enough space on the storage' },
  payload_too_large: { code: 552, text: 'File too large' },
  storage_unavailable: { code: 451, text: 'Storage unavailable, try again later' },
  storage_unreachable: { code: 451, text: 'Storage unreachable, try again later' },
  database_busy: { code: 451, text: 'Busy, try again later' },
  server_busy: { code: 451, text: 'Busy, try again later' },
  timeout: { code: 451, text: 'Timed out' },
  rate_limited: { code: 421, text: 'Too many attempts, try again later' },
  cancelled: { code: 426, text: 'Connection closed; transfer aborted' },
  range_not_satisfiable: { code: 554, text: 'Restart position beyond the end of the file' },
  unsupported: { code: 502, text: 'Not supported' },
};

/** Sign-in refusals: all 530 (the client shows it as a failed login), with the reason in words. */
const LOGIN: Partial<Record<ErrorCode, string>> = {
  invalid_credentials: 'Login incorrect',
  unauthenticated: 'Login incorrect',
  rate_limited: 'Too many failed sign-ins, try again later',
  account_disabled: 'Account disabled',
  forbidden: 'This account has a second factor: sign in with an API key as the password',
};

/** The reply for an error thrown by the gateway core or the file service; anything unknown is 451. */
export function replyFor(e: unknown): Reply {
  const locked = lockSentence(e);
  if (locked) return { code: TABLE.locked!.code, text: locked };
  return (isAppError(e) && TABLE[e.code]) || { code: 451, text: 'Local error in processing' };
}

/** The reply for a refused sign-in. */
export function loginReply(e: unknown): Reply {
  const text = isAppError(e) ? LOGIN[e.code] : undefined;
  if (isAppError(e) && e.code === 'rate_limited' && e.params.retry_after) return { code: 530, text: `${LOGIN.rate_limited} (in ${e.params.retry_after} s)` };
  return { code: 530, text: text ?? 'Login incorrect' };
}
