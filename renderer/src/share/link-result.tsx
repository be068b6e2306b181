/**
 * A created link: copy button (with the caller's `note` under it), QR code (its library loads only when a link
 * exists), the one-time PIN, and what the server actually made of the request:
 * the PIN, the download cap and the real expiry, with a clear word when "no
 * expiry" (or a long one) was shortened to the server's ceiling.
 */
import type { ReactNode } from 'react';
import type { ShareCreated } from '../api/types';
import type { ShareInput } from './share-api';
import { useI18n } from '../i18n';
import { formatDate } from '../lib/format';
import { CopyField } from '../ui/copy-field';
import { useQrCode } from '../ui/qr';
import { atBase, useLoopbackReach } from './loopback-link';

export function LinkResult({ link, asked, downloads, note }: { link: ShareCreated; asked: ShareInput; downloads?: boolean; note?: ReactNode }) {
  const { t, lang } = useI18n();
  const reach = useLoopbackReach(link.url);
  const others = reach ? reach.urls.map((b) => atBase(link.url, b)) : [];
  // A phone scanning the code must get an address it can reach.
  const qr = useQrCode(others[0] ?? link.url, 192);
  return (
    <div className="link-result" data-testid="link-result">
      <CopyField label={t('share.link')} value={link.url} />
      {note}
      {reach && (
        <div className="warn" role="status" data-testid="loopback-note">
          <p>{t('share.loopback', { host: new URL(link.url).host })}</p>
          {others.length > 0 && <p>{t('share.loopback.offer')}</p>}
          {others.map((u, i) => (
            <CopyField key={u} label={i === 0 ? t('share.loopback.network') : t('share.loopback.other')} value={u} />
          ))}
          {others.length === 0 && <p>{t(reach.loopback_only ? 'share.loopback.local_only' : 'share.loopback.none')}</p>}
        </div>
      )}
      <ul className="link-facts" data-testid="link-facts">
        {link.pin && (
          <li className="pin" role="alert">
            {t('share.pin_once', { pin: link.pin })}
          </li>
        )}
        {!link.pin && asked.pin && <li>{t('share.confirm.pin_own')}</li>}
        {downloads && <li>{link.max_downloads ? t('share.confirm.cap', { n: link.max_downloads }) : t('share.confirm.no_cap')}</li>}
        <li>{link.expires_at ? t('share.expires', { date: formatDate(link.expires_at, lang) }) : t('share.confirm.never')}</li>
        {link.expires_at && !asked.ttl && (
          <li className="hint">
            {t('share.clamped_never', { n: ceilingDays(link.expires_at), days: ceilingDays(link.expires_at), date: formatDate(link.expires_at, lang) })}
          </li>
        )}
        {link.expiry_clamped && asked.ttl && <li className="hint">{t('share.clamped')}</li>}
      </ul>
      {qr && <img className="qr" src={qr} width={192} height={192} alt={t('share.qr')} />}
    </div>
  );
}

/** Whole days from now to `iso` (the ceiling the server applied to a link made just now). */
const ceilingDays = (iso: string): number => Math.max(1, Math.round((Date.parse(iso) - Date.now()) / 86_400_000));
