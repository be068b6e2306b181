/** The vault's failures in the reader's words: the crypto module's VaultError codes, else the server's sentence. */
import { ApiError } from '../api/client';
import type { MessageKey, Translate } from '../i18n';
import { errorText } from '../ui/toast';

const WORDS: Record<string, MessageKey> = {
  wrong_passphrase: 'vault.err.wrong_passphrase',
  bad_recovery_key: 'vault.err.bad_recovery_key',
  wrong_key: 'vault.err.wrong_key',
  integrity: 'vault.err.integrity',
  name_too_long: 'vault.err.name_too_long',
  not_encrypted: 'vault.err.integrity',
};

/** The VaultError code of `e`, or null (a VaultError is recognised by its code; the module loads lazily). */
export function vaultCode(e: unknown): string | null {
  if (e instanceof ApiError || !(e instanceof Error)) return null;
  const code = (e as Error & { code?: unknown }).code;
  return typeof code === 'string' && code in WORDS ? code : null;
}

export function vaultErrorText(e: unknown, t: Translate): string {
  const code = vaultCode(e);
  return code ? t(WORDS[code]) : errorText(e, t);
}

/** True for a cancelled unlock (the person closed the dialog): nothing to report. */
export const isCancelled = (e: unknown): boolean => (e as Error)?.name === 'AbortError';
