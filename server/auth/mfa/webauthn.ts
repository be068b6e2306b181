/**
 * Passkeys (WebAuthn) on `@simplewebauthn/server`, as a second factor: the
 * password came first, so user verification is preferred, not required, and
 * no attestation is asked for. A passkey is bound to the relying-party id it
 * was made for (the host name the browser showed); see docs/auth.md for what
 * that means for a LAN address, a tunnel and localhost.
 */
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { AppError } from '../../errors';
import { lazy } from '../../lib/lazy';
import type { PasskeyRow } from './mfa.repo';

/** Who the browser talks to: the RP id (a host name, no port) and the page's origin. */
export interface RelyingParty {
  id: string;
  origin: string;
}

export type { AuthenticationResponseJSON, RegistrationResponseJSON };

const RP_NAME = 'Filedock';
/** The verifier weighs ~30 MB of memory: it loads with the first passkey operation. */
const webauthn = lazy(() => import('@simplewebauthn/server'));
const TIMEOUT_MS = 120_000;

/** A credential as the verifier gives it back, ready to store. */
export interface NewCredential {
  credential_id: string;
  public_key: string;
  counter: number;
  transports: string[];
}

/** Options for `navigator.credentials.create`; the person's existing passkeys are excluded. */
export async function registrationOptions(
  rp: RelyingParty,
  user: { id: number; email: string; username: string },
  existing: PasskeyRow[],
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const { generateRegistrationOptions } = await webauthn();
  return generateRegistrationOptions({
    rpName: RP_NAME,
    rpID: rp.id,
    userName: user.email,
    userDisplayName: user.username,
    userID: new TextEncoder().encode(`filedock-user-${user.id}`),
    timeout: TIMEOUT_MS,
    attestationType: 'none',
    excludeCredentials: existing.map((p) => ({ id: p.credential_id, transports: JSON.parse(p.transports) })),
    authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
  });
}

/** Checks a registration answer against the challenge and the RP; `validation_failed` on `response` when it does not hold. */
export async function verifyRegistration(rp: RelyingParty, expectedChallenge: string, response: RegistrationResponseJSON): Promise<NewCredential> {
  let verified;
  try {
    const { verifyRegistrationResponse } = await webauthn();
    verified = await verifyRegistrationResponse({
      response,
      expectedChallenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: false,
    });
  } catch (e) {
    throw passkeyRefused(e);
  }
  if (!verified.verified) throw passkeyRefused();
  const c = verified.registrationInfo.credential;
  return { credential_id: c.id, public_key: Buffer.from(c.publicKey).toString('base64url'), counter: c.counter, transports: c.transports ?? [] };
}

/** Options for `navigator.credentials.get`, allowing only the given passkeys. */
export async function authenticationOptions(rp: RelyingParty, passkeys: PasskeyRow[]): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const { generateAuthenticationOptions } = await webauthn();
  return generateAuthenticationOptions({
    rpID: rp.id,
    timeout: TIMEOUT_MS,
    userVerification: 'preferred',
    allowCredentials: passkeys.map((p) => ({ id: p.credential_id, transports: JSON.parse(p.transports) })),
  });
}

/**
 * Checks a sign-in answer made with `passkey`; returns the authenticator's
 * new signature counter. False (never a throw) for any answer that does not
 * hold: a wrong challenge, origin or RP, a bad signature, a counter that went
 * backwards (a cloned authenticator).
 */
export async function verifyAuthentication(
  rp: RelyingParty,
  expectedChallenge: string,
  passkey: PasskeyRow,
  response: AuthenticationResponseJSON,
): Promise<number | false> {
  const { verifyAuthenticationResponse } = await webauthn();
  try {
    const r = await verifyAuthenticationResponse({
      response,
      expectedChallenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      credential: {
        id: passkey.credential_id,
        publicKey: new Uint8Array(Buffer.from(passkey.public_key, 'base64url')),
        counter: passkey.counter,
        transports: JSON.parse(passkey.transports),
      },
      requireUserVerification: false,
    });
    return r.verified ? r.authenticationInfo.newCounter : false;
  } catch {
    return false;
  }
}

function passkeyRefused(e?: unknown): AppError {
  const reason = e instanceof Error ? e.message.slice(0, 200) : 'not verified';
  return new AppError('validation_failed', { field: 'response', reason }, { field: 'response', reason });
}
