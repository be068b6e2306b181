/**
 * Why an OIDC sign-in was refused. The code travels to the sign-in page as
 * `/login?error=<code>` (the web UI has a sentence for each); the reason is
 * English detail for the audit row and the log, never shown to the visitor.
 */
export type OidcFailure =
  /** Not configured, switched off, or the provider cannot be reached. */
  | 'oidc_unavailable'
  /** The state is missing, foreign to this browser, used, or older than 10 minutes. */
  | 'oidc_state'
  /** The provider answered with an error (the person cancelled, consent refused). */
  | 'oidc_denied'
  /** The provider refused the code (used twice, expired, PKCE mismatch). */
  | 'oidc_code'
  /** The ID token failed validation (signature, issuer, audience, nonce, expiry). */
  | 'oidc_token'
  /** No usable e-mail, or it belongs to an account this sign-in may not take. */
  | 'oidc_account'
  /** An account with this e-mail exists, but the provider did not confirm the address. */
  | 'oidc_unverified'
  | 'account_disabled';

export class OidcError extends Error {
  constructor(
    readonly code: OidcFailure,
    readonly reason: string,
  ) {
    super(`${code}: ${reason}`);
    this.name = 'OidcError';
  }
}
