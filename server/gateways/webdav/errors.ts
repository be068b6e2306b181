/**
 * The one table from `AppError` codes to WebDAV answers (RFC 4918 statuses),
 * plus the few per-method readings the RFC asks for: an existing target of
 * COPY/MOVE with `Overwrite: F` is 412, a missing parent of PUT/MKCOL/COPY/
 * MOVE is 409. Answers are a short plain-text sentence (OS clients show it)
 * or, for RFC preconditions, a `DAV:error` body naming the precondition.
 */
import { AppError } from '../../errors';
import { XmlError } from '../../lib/xml';
import { lockSentence } from '../lock-sentence';

export interface DavAnswer {
  status: number;
  message: string;
  /** A `DAV:error` precondition element name (e.g. `propfind-finite-depth`). */
  condition?: string;
  headers?: Record<string, string>;
}

/** A WebDAV-specific refusal raised by the handlers. */
export class DavError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly condition?: string,
  ) {
    super(message);
  }
}

const STATUS: Record<string, number> = {
  unauthenticated: 401,
  invalid_credentials: 401,
  forbidden: 403,
  permission_denied: 403,
  read_only: 403,
  // Encrypted folders are read only to gateways (or absent): docs/vault.md.
  encrypted: 403,
  not_encrypted: 403,
  account_disabled: 403,
  name_not_allowed: 403,
  reserved_name: 403,
  not_found: 404,
  conflict: 409,
  name_taken: 409,
  bad_path: 400,
  invalid: 400,
  name_too_long: 400,
  payload_too_large: 413,
  range_not_satisfiable: 416,
  locked: 423,
  rate_limited: 429,
  quota_exceeded: 507,
  insufficient_storage: 507,
  storage_unreachable: 502,
  storage_unavailable: 503,
  database_busy: 503,
  server_busy: 503,
};

const MESSAGES: Record<number, string> = {
  400: 'The request or its path is not valid.',
  401: 'Sign in with your account (user name and password) or an API key as the password.',
  403: 'You may not do this here.',
  404: 'Nothing by that name.',
  409: 'The parent folder does not exist, or the item conflicts with another.',
  412: 'A precondition failed (the target exists, or the If header does not match).',
  413: 'The request body is too large.',
  423: 'The item is locked.',
  429: 'Too many attempts; wait before trying again.',
  507: 'Not enough storage space.',
};

/** The answer for anything a handler threw. */
export function davAnswer(e: unknown): DavAnswer {
  if (e instanceof DavError) return { status: e.status, message: e.message, condition: e.condition };
  if (e instanceof XmlError) return { status: 400, message: `The XML body is not accepted: ${e.message}.` };
  if (!(e instanceof AppError)) return { status: 500, message: 'Internal error.' };
  const status = STATUS[e.code] ?? 500;
  const headers: Record<string, string> = {};
  if (status === 401) headers['WWW-Authenticate'] = 'Basic realm="Filedock", charset="UTF-8"';
  const retry = (e.params as { retry_after?: number }).retry_after;
  if (status === 429 && retry !== undefined) headers['Retry-After'] = String(Math.max(1, Math.ceil(retry)));
  let message = MESSAGES[status] ?? 'The request failed.';
  if ((e.details as { reason?: string } | undefined)?.reason === 'use_api_key') {
    message = 'This account has two-step sign-in: use an API key as the password (Account → Sessions & keys).';
  } else if (e.code === 'account_disabled') message = 'This account is disabled.';
  else if (e.code === 'read_only') message = 'This storage is read-only.';
  else message = lockSentence(e) ?? message;
  return { status, message, headers };
}
