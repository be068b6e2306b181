/**
 * "Pair a phone": pick a folder (and a name, what it may do, how long), and
 * the page shows a QR code of `<base>/pair#<token>` and the same link to copy.
 * The phone that opens it keeps the key and works in that folder only
 * (device mode). `<base>` is the tray's LAN address when it opened this page,
 * else this page's own address; a loopback one gets a word on how to reach
 * the page from the network instead.
 */
import { useMemo, useState } from 'react';
import type { ApiKeyCreated } from '../api/types';
import { useI18n } from '../i18n';
import { formatDate } from '../lib/format';
import { CopyField } from '../ui/copy-field';
import { useQrCode } from '../ui/qr';
import { useSubmit } from '../ui/use-submit';
import * as access from './access-api';
import { ExpirySelect, FolderField, keyError } from './key-fields';
import { isLoopback, pairingBase } from './pairing-base';

export function PairPhone({ onPaired }: { onPaired: () => void }) {
  const { t, lang } = useI18n();
  const base = useMemo(() => pairingBase(new URLSearchParams(location.search).get('base'), location.origin), []);
  const [root, setRoot] = useState<string | null>(null);
  const [label, setLabel] = useState(() => t('pair.label.default'));
  const [writes, setWrites] = useState(true);
  const [days, setDays] = useState(30);
  const [made, setMade] = useState<ApiKeyCreated | null>(null);
  const link = made ? `${base}/pair#${made.token}` : null;
  const qr = useQrCode(link, 240);

  const { submit, busy, error } = useSubmit(async () => {
    try {
      setMade(
        await access.pairPhone({ label: label.trim(), root: root!, verbs: writes ? ['files:read', 'files:write'] : ['files:read'], expires_in_days: days }),
      );
    } catch (e) {
      throw keyError(e, t);
    }
    onPaired();
  });

  return (
    <section className="card" aria-labelledby="pair-title" data-testid="pair">
      <h2 id="pair-title">{t('pair.title')}</h2>
      <p>{t('pair.intro')}</p>
      {isLoopback(base) && (
        <p className="warn" data-testid="pair-loopback">
          {t('pair.loopback', { base })}
        </p>
      )}
      {!made ? (
        <form className="form" onSubmit={submit}>
          <FolderField value={root} onChange={setRoot} required />
          <label>
            {t('pair.label')}
            <input required maxLength={100} value={label} onChange={(e) => setLabel(e.target.value)} />
          </label>
          <label className="check">
            <input type="checkbox" checked={writes} onChange={(e) => setWrites(e.target.checked)} />
            {t('pair.writes')}
          </label>
          <ExpirySelect value={days} onChange={setDays} />
          <p className="hint">{t('pair.opens', { base })}</p>
          {error && (
            <p className="error" role="alert">
              {error}
            </p>
          )}
          <div className="actions">
            <button type="submit" className="primary" disabled={busy || !root || !label.trim()}>
              {t('pair.create')}
            </button>
          </div>
        </form>
      ) : (
        <div className="pair-result">
          <p>{t('pair.scan')}</p>
          {qr && <img className="qr" src={qr} width={240} height={240} alt={t('pair.qr')} />}
          <CopyField label={t('pair.link')} value={link!} testId="pair-link" />
          <p className="hint">{t('pair.until', { folder: made.key.root ?? '', date: formatDate(made.key.expires_at, lang) })}</p>
          <div className="actions">
            <button type="button" onClick={() => setMade(null)}>
              {t('pair.again')}
            </button>
          </div>
        </div>
      )}
    </section>
  );
}
