/**
 * Errors shared by the network drivers: everything that means "the backend
 * cannot be reached or refused the session" becomes `storage_unreachable`
 * with the backend's own sentence in `params.reason`.
 */
import { AppError } from '../../../errors';

/** Socket and TLS error codes that mean the server is down, unreachable or untrusted. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EADDRNOTAVAIL',
  'ERR_SOCKET_CLOSED',
  'ERR_STREAM_PREMATURE_CLOSE',
  'ERR_TLS_PIN_MISMATCH',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'CERT_HAS_EXPIRED',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'ERR_SSL_WRONG_VERSION_NUMBER',
]);

/** `storage_unreachable` carrying `reason`, the backend's (English) sentence. */
export const unreachable = (reason: string): AppError => new AppError('storage_unreachable', { reason }, undefined, `storage unreachable: ${reason}`);

/** `validation_failed` for a config `create()` cannot use, naming the first bad field and listing all. */
export function invalidConfig(problems: Array<{ field: string; message: string }>): AppError {
  const [first] = problems;
  return new AppError('validation_failed', { field: first.field, reason: first.message }, { field: first.field, problems });
}

/** The error's own code, looking through one level of wrapping (fetch wraps socket errors). */
export function errorCode(e: unknown): string | undefined {
  const err = e as { code?: unknown; cause?: { code?: unknown } } | null;
  const code = err?.code ?? err?.cause?.code;
  return typeof code === 'string' ? code : undefined;
}

/** True when `e` is a socket/TLS failure rather than an answer from the server. */
export function isNetworkError(e: unknown): boolean {
  const code = errorCode(e);
  return code !== undefined && (NETWORK_CODES.has(code) || code.startsWith('ERR_SSL') || code.startsWith('ERR_TLS'));
}

/** Bugs in our own code must surface as they are, never disguised as a backend failure. */
export const isProgrammingError = (e: unknown): boolean =>
  e instanceof TypeError || e instanceof RangeError || e instanceof ReferenceError || e instanceof SyntaxError;

/** The one-line sentence of any thrown value. */
export const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e));
