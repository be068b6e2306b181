/** A labelled read-only value with a Copy button (link, token, pairing address). */
import { useId, useState } from 'react';
import { useI18n } from '../i18n';

/**
 * Copies with the async clipboard; where a page has none (plain-HTTP LAN
 * addresses) the text is selected instead, so Ctrl+C works.
 */
export function CopyField({ label, value, testId }: { label: string; value: string; testId?: string }) {
  const { t } = useI18n();
  const id = useId();
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
    } catch {
      (document.getElementById(id) as HTMLInputElement | null)?.select();
    }
    setCopied(true);
  };
  return (
    <label className="copy-field">
      {label}
      <span className="row-input">
        <input id={id} readOnly value={value} data-testid={testId} onFocus={(e) => e.target.select()} />
        <button type="button" onClick={() => void copy()}>
          {copied ? t('common.copied') : t('common.copy')}
        </button>
      </span>
    </label>
  );
}
