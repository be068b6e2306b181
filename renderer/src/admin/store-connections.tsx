/**
 * Admin → Apps → Stores (docs/app-store.md "Web UI"): the connected stores
 * (address, key fingerprint, on/off, last refresh and its failure in words),
 * refresh, remove with a confirm, and "Add store" by address and trusted key,
 * which shows the fingerprint the server answers so the admin can compare it.
 */
import { useEffect, useState } from 'react';
import { ApiError } from '../api/client';
import { useI18n } from '../i18n';
import { formatDate } from '../lib/format';
import { ConfirmDialog } from '../ui/forms';
import { useToast } from '../ui/toast';
import { storeApi, type StoreRow } from './store-api';
import { storeChanged } from './store-updates';
import { lastErrorText, storeRefusalText } from './store-words';

const label = (s: StoreRow) => s.name ?? s.url;

export function StoreConnections() {
  const { t } = useI18n();
  const [stores, setStores] = useState<StoreRow[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const load = () => storeApi.stores().then(setStores, setError);
  useEffect(() => void load(), []);
  const put = (s: StoreRow) => {
    setStores((l) => (l ?? []).map((x) => (x.id === s.id ? s : x)));
    storeChanged();
  };
  return (
    <div className="settings" data-testid="admin-stores">
      <section className="card" aria-label={t('store.stores.title')}>
        <h2>{t('store.stores.title')}</h2>
        {error ? (
          <p className="error" role="alert">
            {storeRefusalText(error, t)}
          </p>
        ) : null}
        {stores === null && !error && <p className="muted">{t('common.loading')}</p>}
        {stores?.length === 0 && <p className="muted">{t('store.stores.none')}</p>}
        {stores?.map((s) => (
          <StoreCard
            key={s.id}
            store={s}
            onChange={put}
            onRemoved={() => {
              setStores((l) => (l ?? []).filter((x) => x.id !== s.id));
              storeChanged();
            }}
          />
        ))}
      </section>
      <AddStore
        onAdded={(s) => {
          setStores((l) => [...(l ?? []), s]);
          storeChanged();
        }}
      />
    </div>
  );
}

function StoreCard({ store: s, onChange, onRemoved }: { store: StoreRow; onChange: (s: StoreRow) => void; onRemoved: () => void }) {
  const { t, lang } = useI18n();
  const toast = useToast();
  const [busy, setBusy] = useState(false);
  const [refusal, setRefusal] = useState<string | null>(null);
  const [confirm, setConfirm] = useState(false);
  const name = label(s);
  const refresh = async () => {
    setBusy(true);
    setRefusal(null);
    try {
      onChange(await storeApi.refresh(s.id));
      toast.info(t('store.stores.refreshed_ok', { name }));
    } catch (e) {
      setRefusal(storeRefusalText(e, t));
      void storeApi.stores().then((l) => {
        const now = l.find((x) => x.id === s.id);
        if (now) onChange(now);
      });
    } finally {
      setBusy(false);
    }
  };
  return (
    <article className="card store-card" aria-label={name} data-testid={`store-${s.id}`}>
      <h3>{name}</h3>
      <dl className="facts">
        <dt>{t('store.stores.url')}</dt>
        <dd>
          <code>{s.url}</code>
        </dd>
        <dt>{t('store.stores.fingerprint')}</dt>
        <dd>
          <code className="fingerprint" data-testid="store-fingerprint">
            {s.fingerprint}
          </code>
        </dd>
        <dt>{t('store.stores.refreshed')}</dt>
        <dd>{s.refreshed_at ? formatDate(s.refreshed_at, lang) : t('store.stores.never')}</dd>
        {s.entries !== null && (
          <>
            <dt>{t('store.stores.entries')}</dt>
            <dd>{s.entries}</dd>
          </>
        )}
      </dl>
      {s.last_error && !refusal && <p className="error">{t('store.stores.last_error', { reason: lastErrorText(s.last_error, t) })}</p>}
      {s.licences_unchecked && <p className="error">{t('store.lic.unchecked')}</p>}
      {refusal && (
        <p className="error" role="alert">
          {refusal}
        </p>
      )}
      <label className="check">
        <input type="checkbox" checked={s.enabled} onChange={(e) => void storeApi.setEnabled(s.id, e.target.checked).then(onChange, toast.error)} />{' '}
        {t('store.stores.enabled', { name })}
      </label>
      <div className="actions">
        <button type="button" disabled={busy} aria-label={t('store.stores.refresh_of', { name })} onClick={() => void refresh()}>
          {busy ? t('store.cat.working') : t('store.stores.refresh')}
        </button>
        <button type="button" className="danger" aria-label={t('store.stores.remove_of', { name })} onClick={() => setConfirm(true)}>
          {t('store.stores.remove')}
        </button>
      </div>
      {confirm && (
        <ConfirmDialog
          title={t('store.stores.remove_of', { name })}
          text={t('store.stores.remove_confirm', { name })}
          confirmLabel={t('store.stores.remove')}
          danger
          onClose={() => setConfirm(false)}
          onConfirm={() => void storeApi.remove(s.id).then(onRemoved, toast.error)}
        />
      )}
    </article>
  );
}

function AddStore({ onAdded }: { onAdded: (s: StoreRow) => void }) {
  const { t } = useI18n();
  const [url, setUrl] = useState('');
  const [pem, setPem] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<{ text: string; signedBy?: string } | null>(null);
  const [added, setAdded] = useState<StoreRow | null>(null);
  return (
    <section className="card" aria-label={t('store.stores.add')}>
      <h2>{t('store.stores.add')}</h2>
      {added && (
        <div className="notice" role="status" data-testid="store-added">
          <p>{t('store.stores.added', { name: label(added) })}</p>
          <code className="fingerprint">{added.fingerprint}</code>
        </div>
      )}
      <form
        className="form"
        onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          setError(null);
          setAdded(null);
          try {
            const s = await storeApi.connect(url.trim(), pem.trim());
            setAdded(s);
            onAdded(s);
            setUrl('');
            setPem('');
          } catch (err) {
            const d = err instanceof ApiError ? err.details : {};
            setError({
              text: storeRefusalText(err, t),
              signedBy:
                d.reason === 'key_changed' && typeof d.fingerprint === 'string'
                  ? t('store.stores.signed_by', { fingerprint: d.fingerprint, trusted: String(d.trusted ?? '') })
                  : undefined,
            });
          } finally {
            setBusy(false);
          }
        }}
      >
        <label>
          {t('store.stores.add_url')}
          <input type="url" value={url} required placeholder="https://apps.example/store/" onChange={(e) => setUrl(e.target.value)} />
        </label>
        <label>
          {t('store.stores.add_key')}
          <textarea rows={4} value={pem} required spellCheck={false} className="mono" onChange={(e) => setPem(e.target.value)} />
        </label>
        {error && (
          <div className="error" role="alert">
            <p>{error.text}</p>
            {error.signedBy && <p>{error.signedBy}</p>}
          </div>
        )}
        <div className="actions">
          <button type="submit" className="primary" disabled={busy || !url.trim() || !pem.trim()}>
            {busy ? t('store.cat.working') : t('store.stores.add')}
          </button>
        </div>
      </form>
    </section>
  );
}
