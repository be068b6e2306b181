/**
 * A paid app's licence fetched from its store by purchase code (docs/app-store.md, "Licences online"):
 * the code the buyer got, sent to the server, which fetches and verifies the licence and sets it.
 */
import { useId, useState } from 'react';
import { useI18n } from '../i18n';
import { useToast } from '../ui/toast';
import { storeApi, type CatalogueEntry } from './store-api';
import { storeRefusalText } from './store-words';

export function StoreLicence({ entry: e }: { entry: CatalogueEntry }) {
  const { t } = useI18n();
  const toast = useToast();
  const id = useId();
  const [code, setCode] = useState('');
  const [busy, setBusy] = useState(false);
  const [refusal, setRefusal] = useState<string | null>(null);
  const submit = async () => {
    setBusy(true);
    setRefusal(null);
    try {
      const r = await storeApi.fetchLicence(e, code.trim());
      if (r.status === 'valid' || r.status === 'grace') toast.info(t('store.lic.ok', { name: e.name }));
      else setRefusal(t('store.lic.held', { name: e.name, status: r.status }));
      setCode('');
    } catch (err) {
      setRefusal(storeRefusalText(err, t));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form
      className="store-licence"
      onSubmit={(ev) => {
        ev.preventDefault();
        void submit();
      }}
    >
      <label htmlFor={id}>{t('store.lic.code')}</label>
      <input id={id} value={code} autoComplete="off" spellCheck={false} onChange={(ev) => setCode(ev.target.value)} />
      <button type="submit" disabled={busy || code.trim() === ''} aria-label={t('store.lic.get_of', { name: e.name })}>
        {busy ? t('store.cat.working') : t('store.lic.get')}
      </button>
      {refusal && (
        <p className="error" role="alert">
          {refusal}
        </p>
      )}
    </form>
  );
}
