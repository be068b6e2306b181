/**
 * Two-factor sign-in routes, typed, and the browser's passkey prompts (the
 * WebAuthn helper library loads on first use, so the sign-in page stays small).
 */
import { api } from '../api/client';
import type { MfaChallenge, MfaStatus, PasskeyView, TotpSetup, User } from '../api/types';

type Codes = { recovery_codes: string[] };
const pw = (current_password: string) => ({ current_password });

export const status = () => api<MfaStatus>('/api/auth/mfa');
export const totpSetup = (password: string) => api<TotpSetup>('/api/auth/mfa/totp/setup', { body: pw(password) });
export const totpConfirm = (code: string) => api<Codes>('/api/auth/mfa/totp/confirm', { body: { code } });
export const totpRemove = (password: string) => api('/api/auth/mfa/totp', { method: 'DELETE', body: pw(password) });
export const regenerateCodes = (password: string) => api<Codes>('/api/auth/mfa/recovery-codes', { body: pw(password) });
export const passkeyRemove = (id: number, password: string) => api(`/api/auth/mfa/passkeys/${id}`, { method: 'DELETE', body: pw(password) });

/** Password check, the browser's "create a passkey" prompt, then the server stores it; codes come when they are the enrolment's first. */
export async function addPasskey(password: string, name: string): Promise<{ passkey: PasskeyView } & Partial<Codes>> {
  const start = await api<{ challenge: string; options: Record<string, unknown> }>('/api/auth/mfa/passkeys/options', { body: pw(password) });
  const { startRegistration } = await import('@simplewebauthn/browser');
  const response = await startRegistration({ optionsJSON: start.options as never });
  return api('/api/auth/mfa/passkeys', { body: { challenge: start.challenge, name, response } });
}

/** Login `POST` answered with a challenge or with the session. */
export const isChallenge = (r: MfaChallenge | { user: User }): r is MfaChallenge => (r as MfaChallenge).mfa_required === true;

/** Answers a login challenge; `passkey` runs the browser's prompt over the challenge's options. */
export async function secondStep(c: MfaChallenge, answer: { totp: string } | { recovery_code: string } | 'passkey'): Promise<{ user: User }> {
  let body: Record<string, unknown>;
  if (answer === 'passkey') {
    const { startAuthentication } = await import('@simplewebauthn/browser');
    body = { passkey: await startAuthentication({ optionsJSON: c.passkey_options as never }) };
  } else body = answer;
  return api('/api/auth/login/mfa', { body: { challenge: c.challenge, ...body }, quiet401: true });
}

/** True when this page may use passkeys: WebAuthn exists and the page is a secure context (https or localhost). */
export const passkeysHere = (): boolean => typeof window.PublicKeyCredential === 'function' && window.isSecureContext;
