/**
 * Turns ssh2 and SFTP failures into the driver contract's AppErrors. The
 * backend's own words travel in `params.reason` so an admin testing a storage
 * reads why it failed (refused, timed out, wrong key, changed host key).
 */
import { AppError } from '../../../errors';

/** SFTP v3 status codes (draft-ietf-secsh-filexfer-02, section 7). */
export const SFTP_STATUS = {
  EOF: 1,
  NO_SUCH_FILE: 2,
  PERMISSION_DENIED: 3,
  FAILURE: 4,
  BAD_MESSAGE: 5,
  NO_CONNECTION: 6,
  CONNECTION_LOST: 7,
  OP_UNSUPPORTED: 8,
} as const;

/**
 * The backend cannot be reached or refused the session. `kind` tells a dropped
 * connection (worth one retry on a fresh session) from a timeout or a refusal
 * (retrying would only double the wait).
 */
export const unreachable = (reason: string, kind: 'lost' | 'timeout' | 'refused' = 'refused'): AppError =>
  new AppError('storage_unreachable', { reason }, { reason, kind }, `sftp: ${reason}`);

const statusOf = (err: unknown): number | undefined => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
};

/** True when the SFTP request failed because the status says the path is missing. */
export const isNoSuchFile = (err: unknown): boolean => statusOf(err) === SFTP_STATUS.NO_SUCH_FILE;

/** True for the generic failure status, which OpenSSH also returns for "exists" and "not empty". */
export const isFailure = (err: unknown): boolean => statusOf(err) === SFTP_STATUS.FAILURE;

/**
 * True when the error means the connection went away (not a refusal of the
 * request): ssh2 fails pending requests with "No response from server" when
 * the channel closes, socket errors carry a `level`, and our own session
 * wrapper reports a closed session as `storage_unreachable` of kind `lost`.
 */
export function isConnectionLoss(err: unknown): boolean {
  if (err instanceof AppError) return err.details?.kind === 'lost';
  const s = statusOf(err);
  if (s === SFTP_STATUS.NO_CONNECTION || s === SFTP_STATUS.CONNECTION_LOST) return true;
  const e = err as { message?: string; level?: string } | null;
  return e?.message === 'No response from server' || e?.level === 'client-socket';
}

/** Maps the failure of an SFTP request on `path` (relative to the storage root). */
export function fromSftp(err: unknown, path: string): AppError {
  if (err instanceof AppError) return err;
  const message = (err as Error)?.message ?? String(err);
  switch (statusOf(err)) {
    case SFTP_STATUS.NO_SUCH_FILE:
      return new AppError('not_found', { path }, undefined, `sftp: ${message}: ${path}`);
    case SFTP_STATUS.PERMISSION_DENIED:
      return new AppError('permission_denied', { path }, { path, reason: message }, `sftp: ${message}: ${path}`);
    case SFTP_STATUS.BAD_MESSAGE:
      // OpenSSH answers ENAMETOOLONG and EINVAL with BAD_MESSAGE: the name itself is the problem.
      return new AppError('name_not_allowed', { reason: 'backend' }, { code: 'NAME_NOT_ALLOWED', reason: 'backend', path }, `sftp: ${message}: ${path}`);
    case SFTP_STATUS.OP_UNSUPPORTED:
      return new AppError('unsupported', { reason: message }, { path }, `sftp: ${message}: ${path}`);
  }
  if (isConnectionLoss(err)) return unreachable(`connection lost (${message})`, 'lost');
  return new AppError('internal', { reason: message }, { path }, `sftp: ${message}: ${path}`);
}

/**
 * Maps a failure to open a session. `hostKeyRefusal` is the verifier's own
 * sentence when it turned the server's key down (ssh2 only says "verification failed").
 */
export function fromConnect(err: unknown, where: string, user: string, hostKeyRefusal: string | null, timeoutMs: number): AppError {
  if (err instanceof AppError) return err;
  if (hostKeyRefusal) return unreachable(hostKeyRefusal);
  const e = err as NodeJS.ErrnoException & { level?: string };
  const message = e?.message ?? String(err);
  if (e?.level === 'client-authentication') return unreachable(`authentication failed for user "${user}" on ${where} (${message})`);
  if (e?.level === 'client-timeout') return unreachable(`timed out after ${timeoutMs / 1000}s connecting to ${where}`, 'timeout');
  switch (e?.code) {
    case 'ECONNREFUSED':
      return unreachable(`connection refused by ${where}`);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return unreachable(`host not found: ${where}`);
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return unreachable(`host unreachable: ${where}`);
    case 'ECONNRESET':
      return unreachable(`connection reset by ${where}`);
  }
  return unreachable(`cannot connect to ${where}: ${message}`);
}
