/** The lock drawn before an encrypted row's name (an encrypted folder's root and everything in it). */
import { useI18n } from '../i18n';
import type { Entry } from '../api/types';
import type { VaultEntry } from './vault-paths';

export function LockMark({ e }: { e: Entry }) {
  const { t } = useI18n();
  const v = e as VaultEntry;
  if (!v.encrypted && !v.cipher_name) return null;
  return (
    <span
      className="lock-mark"
      role="img"
      aria-label={t('vault.encrypted')}
      title={v.unreadable ? t('vault.err.integrity') : t('vault.encrypted')}
      data-testid="lock-mark"
    >
      <svg width="14" height="14" viewBox="0 0 24 24" aria-hidden="true">
        <path
          fill="currentColor"
          d="M12 2a5 5 0 0 0-5 5v3H6a2 2 0 0 0-2 2v8a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2v-8a2 2 0 0 0-2-2h-1V7a5 5 0 0 0-5-5zm-3 8V7a3 3 0 0 1 6 0v3z"
        />
      </svg>
    </span>
  );
}
