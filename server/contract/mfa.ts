/** Two-factor sign-in: the login's second step and the "Account security" page (docs/auth.md). */

export type MfaMethod = 'totp' | 'recovery' | 'passkey';

/**
 * `POST /api/auth/login` for an account with a second factor (no cookie is
 * set): answer the challenge at `POST /api/auth/login/mfa` before
 * `expires_at`. `passkey_options` (WebAuthn request options, JSON form) come
 * with `passkey` in `methods`.
 */
export interface MfaChallenge {
  mfa_required: true;
  challenge: string;
  methods: MfaMethod[];
  expires_at: string;
  passkey_options?: Record<string, unknown>;
}

export interface PasskeyView {
  id: number;
  name: string;
  /** The host name the passkey was made for; it works only there. */
  rp_id: string;
  created_at: string;
  last_used_at: string | null;
}

/** `GET /api/auth/mfa`. */
export interface MfaStatus {
  /** True when a second factor is asked for at sign-in. */
  enabled: boolean;
  totp: { enabled: boolean; pending: boolean; confirmed_at: string | null };
  recovery_codes: { remaining: number; created_at: string | null };
  passkeys: PasskeyView[];
  /** The passkey host name of the address this request came to. */
  rp_id: string;
}

/** `POST /api/auth/mfa/totp/setup`: the secret for manual entry, its `otpauth://` URI and a QR image (data: URL, PNG). */
export interface TotpSetup {
  secret: string;
  uri: string;
  qr: string;
  expires_at: string;
}

/** `GET /api/admin/mfa`: who has a second factor. */
export interface MfaEnrolledUser {
  user_id: number;
  methods: Array<'totp' | 'passkey'>;
}
