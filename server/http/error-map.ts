/**
 * The one place that turns an error code into an HTTP status, per door: the
 * spec gives some codes different statuses on different surfaces
 * (`read_only` 403 on file verbs, 409 on app and public doors; `quota_exceeded`
 * 413 on file verbs, 507 on app doors and the file drop).
 */
export type Door = 'api' | 'files' | 'admin' | 'auth' | 'public' | 'app' | 'drop';

const BASE: Record<string, number> = {
  unauthorised: 401,
  unauthorized: 401,
  unauthenticated: 401,
  invalid_credentials: 401,
  pin_wrong: 401,
  mfa_invalid: 401,
  mfa_expired: 401,
  forbidden: 403,
  account_disabled: 403,
  permission_denied: 403,
  setup_local_only: 403,
  csrf_failed: 403,
  session_required: 403,
  supertenant_only: 403,
  encrypted: 403,
  // A wrong vault passphrase or recovery proof (docs/vault.md): refused like a wrong password, and throttled like one.
  vault_auth_failed: 403,
  read_only: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  name_taken: 409,
  setup_done: 409,
  update_refused: 409,
  link_unavailable: 409,
  expired: 410,
  revoked: 410,
  gone: 410,
  upload_expired: 410,
  payload_too_large: 413,
  archive_too_large: 413,
  quota_exceeded: 413,
  // The backend's disk (or its own quota) is full: not an outage, so no 503 that clients would retry forever.
  insufficient_storage: 507,
  unsupported_media_type: 415,
  range_not_satisfiable: 416,
  not_applicable: 422,
  // Plaintext (a plain name, bytes without an FDV1 header) written into an encrypted folder.
  not_encrypted: 422,
  invalid: 422,
  required: 422,
  checksum_mismatch: 422,
  locked: 423,
  // A link the uplink guard suspended: it exists and will work again once re-enabled.
  link_suspended: 423,
  rate_limited: 429,
  storage_unreachable: 502,
  unsupported: 501,
  storage_unavailable: 503,
  not_configured: 503,
  database_busy: 503,
  server_busy: 503,
  timeout: 504,
  internal: 500,
  internal_error: 500,
  // The assistant (spec: Errors, assistant rows). Provider failures are the upstream's: 502, a timeout 504.
  assistant_off: 404,
  assistant_not_configured: 404,
  assistant_not_found: 404,
  assistant_busy: 429,
  assistant_conflict: 409,
  assistant_decided: 409,
  assistant_undone: 409,
  assistant_no_secret_key: 409,
  assistant_message_long: 413,
  assistant_too_long: 413,
  assistant_encrypted: 403,
  assistant_no_tools: 422,
  assistant_provider: 502,
  assistant_provider_key: 502,
  assistant_timeout: 504,
  // App plugins (docs/app-plugins.md). The feature switched off is 503; an app that failed (timeout, memory,
  // its own error) is the upstream's failure: 502.
  plugins_disabled: 503,
  app_plugins_disabled: 503,
  app_failed: 502,
  app_host_refused: 403,
  // Public app pages: the link's creator lost access to the files it exposes.
  no_access: 403,
  // A held licence (docs/app-plugins.md, "Licences"): the app is stopped for everyone until its licence is good again.
  store_license: 403,
  // An upgrade released after the licence's `updates_until` (the installed version keeps running).
  store_updates: 403,
  // The app store (docs/app-store.md): off is 503; a store that cannot be reached or serves what does not
  // verify is the upstream's failure (502); an intent refused for this install's state is 409.
  app_store_disabled: 503,
  store_unreachable: 502,
  store_signature: 502,
  store_invalid: 502,
  store_sha_mismatch: 502,
  intent_incompatible: 409,
  intent_installed: 409,
  intent_newer_installed: 409,
  intent_permission: 409,
  intent_in_use: 409,
  intent_unsupported: 409,
  // A restore drill asked for with no storage backed up to an enabled target: nothing to drill (docs/replication.md).
  no_backup_target: 409,
};

const BY_DOOR: Partial<Record<Door, Record<string, number>>> = {
  public: { read_only: 409, locked: 429, quota_exceeded: 507 },
  drop: { read_only: 409, locked: 429, quota_exceeded: 507 },
  app: { read_only: 409, quota_exceeded: 507 },
  admin: { storage_unreachable: 502 },
  // A file verb on a storage that is down right now: retry later (the catalogue still lists it).
  files: { storage_unreachable: 503 },
};

/**
 * The HTTP status of `code` on `door`; 400 for the validation and unreadable-request family. An `encrypted`
 * refusal of a copy or move across an encrypted folder's boundary (`params.conflict`) is a conflict (409), not
 * a matter of who asks (docs/vault.md, "Every door").
 */
export function statusFor(code: string, door: Door = 'api', params?: Record<string, unknown>): number {
  if (code === 'encrypted' && params?.conflict) return 409;
  return BY_DOOR[door]?.[code] ?? BASE[code] ?? 400;
}
