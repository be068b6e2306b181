/**
 * AppError carries a stable, spec-defined code plus the values its sentence is
 * filled with. It knows nothing of HTTP: `http/error-map.ts` picks the status
 * per door, and the i18n catalogue turns the code into the reader's sentence.
 */
export type ErrorCode =
  | 'unauthorised'
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'validation_failed'
  | 'rate_limited'
  | 'conflict'
  | 'internal'
  | 'storage_unreachable'
  | 'storage_unavailable'
  | 'quota_exceeded'
  | 'insufficient_storage'
  | 'read_only'
  | 'name_taken'
  | 'name_not_allowed'
  | 'name_too_long'
  | 'reserved_name'
  | 'locked'
  | 'permission_denied'
  | 'too_many_paths'
  | 'too_many'
  | 'pin_wrong'
  | 'email_required'
  | 'email_invalid'
  | 'email_taken'
  | 'username_invalid'
  | 'username_taken'
  | 'bad_json'
  | 'bad_body'
  | 'bad_multipart'
  | 'bad_id'
  | 'bad_path'
  | 'bad_name'
  | 'payload_too_large'
  | 'invalid_credentials'
  | 'account_disabled'
  | 'setup_done'
  | 'setup_local_only'
  | 'unsupported'
  | 'timeout'
  | 'cancelled'
  | 'range_not_satisfiable'
  | 'upload_expired'
  | 'checksum_mismatch'
  | 'unsupported_media_type'
  | 'gone'
  | 'expired'
  | 'revoked'
  | 'link_suspended'
  | 'link_unavailable'
  | 'no_access'
  | 'archive_invalid'
  | 'archive_too_large'
  | 'archive_encrypted'
  | 'not_configured'
  | 'update_refused'
  | 'csrf_failed'
  | 'method_not_allowed'
  | 'database_busy'
  | 'server_busy'
  | 'mfa_invalid'
  | 'mfa_expired'
  | 'session_required'
  | 'supertenant_only'
  | 'encrypted'
  | 'not_encrypted'
  | 'vault_auth_failed'
  | 'assistant_off'
  | 'assistant_not_configured'
  | 'assistant_not_found'
  | 'assistant_busy'
  | 'assistant_conflict'
  | 'assistant_message_long'
  | 'assistant_provider'
  | 'assistant_provider_key'
  | 'assistant_no_tools'
  | 'assistant_timeout'
  | 'assistant_too_long'
  | 'assistant_no_secret_key'
  | 'assistant_encrypted'
  | 'assistant_decided'
  | 'assistant_undone'
  | 'not_applicable'
  | 'invalid'
  | 'required'
  | 'plugins_disabled'
  | 'app_plugins_disabled'
  | 'app_failed'
  | 'app_host_refused'
  | 'store_license'
  | 'store_updates'
  | 'app_store_disabled'
  | 'store_unreachable'
  | 'store_signature'
  | 'store_invalid'
  | 'store_sha_mismatch'
  | 'intent_incompatible'
  | 'intent_installed'
  | 'intent_in_use'
  | 'intent_license'
  | 'intent_disk_full'
  | 'intent_newer_installed'
  | 'intent_permission'
  | 'intent_unsupported'
  | 'no_backup_target';

export type Params = Record<string, string | number | boolean | null | undefined>;

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly params: Params;
  readonly details?: Record<string, unknown>;

  /** `detail` is an English, developer-facing sentence (logs, `error_text` fallbacks). */
  constructor(code: ErrorCode, params: Params = {}, details?: Record<string, unknown>, detail?: string) {
    super(detail ?? code);
    this.name = 'AppError';
    this.code = code;
    this.params = params;
    this.details = details;
  }
}

export const isAppError = (e: unknown): e is AppError => e instanceof AppError;

/** Shorthands for the errors every module throws. */
export const notFound = (path?: string) => new AppError('not_found', path === undefined ? {} : { path });
export const validation = (field: string, reason?: string) =>
  new AppError('validation_failed', { field, reason: reason ?? '' }, { field, ...(reason ? { reason } : {}) });
export const forbidden = (reason?: string) => new AppError('forbidden', reason ? { reason } : {});
