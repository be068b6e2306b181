/**
 * NFSv3 status codes (RFC 1813 section 2.6) and the one table from `AppError`
 * codes to them. Anything not an AppError is SERVERFAULT: internals never
 * reach a client.
 */
import { isAppError, type ErrorCode } from '../../errors';

export enum Nfs3 {
  OK = 0,
  PERM = 1,
  NOENT = 2,
  IO = 5,
  ACCES = 13,
  EXIST = 17,
  XDEV = 18,
  NOTDIR = 20,
  ISDIR = 21,
  INVAL = 22,
  FBIG = 27,
  NOSPC = 28,
  ROFS = 30,
  NAMETOOLONG = 63,
  NOTEMPTY = 66,
  DQUOT = 69,
  STALE = 70,
  BADHANDLE = 10001,
  NOT_SYNC = 10002,
  BAD_COOKIE = 10003,
  NOTSUPP = 10004,
  TOOSMALL = 10005,
  SERVERFAULT = 10006,
  JUKEBOX = 10008,
}

/** A refusal that is already an NFS status (a bad handle, a stale cookie). */
export class NfsError extends Error {
  constructor(
    readonly status: Nfs3,
    message = Nfs3[status],
  ) {
    super(message);
  }
}

const TABLE: Partial<Record<ErrorCode, Nfs3>> = {
  not_found: Nfs3.NOENT,
  gone: Nfs3.STALE,
  forbidden: Nfs3.ACCES,
  permission_denied: Nfs3.ACCES,
  unauthenticated: Nfs3.ACCES,
  locked: Nfs3.ACCES,
  read_only: Nfs3.ROFS,
  encrypted: Nfs3.ACCES,
  not_encrypted: Nfs3.ACCES,
  conflict: Nfs3.EXIST,
  name_taken: Nfs3.EXIST,
  bad_path: Nfs3.INVAL,
  bad_name: Nfs3.INVAL,
  name_not_allowed: Nfs3.INVAL,
  reserved_name: Nfs3.INVAL,
  name_too_long: Nfs3.NAMETOOLONG,
  quota_exceeded: Nfs3.DQUOT,
  insufficient_storage: Nfs3.NOSPC,
  payload_too_large: Nfs3.FBIG,
  unsupported: Nfs3.NOTSUPP,
  method_not_allowed: Nfs3.NOTSUPP,
  storage_unavailable: Nfs3.JUKEBOX,
  storage_unreachable: Nfs3.JUKEBOX,
  database_busy: Nfs3.JUKEBOX,
  server_busy: Nfs3.JUKEBOX,
  timeout: Nfs3.JUKEBOX,
  rate_limited: Nfs3.JUKEBOX,
};

/** The NFS status a client gets for `e`. */
export function nfsStatus(e: unknown): Nfs3 {
  if (e instanceof NfsError) return e.status;
  return (isAppError(e) && TABLE[e.code]) || Nfs3.SERVERFAULT;
}
