/** A created link: copy button, QR code (its library loads only when a link exists), one-time PIN. */
import { useEffect, useState } from 'react';
import type { ShareCreated } from '../api/types';
import { useI18n } from '../i18n';
import { formatDate } from '../lib/format';

export function LinkResult({ link }: { link: ShareCreated }) {
  const { t, lang } = useI18n();
  const [qr, setQr] = useState<string | null>(null);
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    let live = true;
    import('qrcode')
      .then((m) => (m.default ?? m).toDataURL(link.url, { margin: 1, width: 192 }))
      .then((d) => live && setQr(d), () => {});
    return () => {
      live = false;
    };
  }, [link.url]);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(link.url);
    } catch {
      // Plain-HTTP pages have no async clipboard: select the text so Ctrl+C works.
      (document.getElementById('share-url') as HTMLInputElement | null)?.select();
    }
    setCopied(true);
  };
  return (
    <div className="link-result" data-testid="link-result">
      <label>
        {t('share.link')}
        <span className="row-input">
          <input id="share-url" readOnly value={link.url} onFocus={(e) => e.target.select()} />
          <button type="button" onClick={() => void copy()}>{copied ? t('common.copied') : t('common.copy')}</button>
        </span>
      </label>
      {link.pin && <p className="pin" role="alert">{t('share.pin_once', { pin: link.pin })}</p>}
      {link.expiry_clamped && <p className="hint">{t('share.clamped')}</p>}
      {link.expires_at && <p className="muted">{t('share.expires', { date: formatDate(link.expires_at, lang) })}</p>}
      {qr && <img className="qr" src={qr} width={192} height={192} alt={t('share.qr')} />}
    </div>
  );
}
