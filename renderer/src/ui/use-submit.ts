/** The busy/error bookkeeping every form submit repeats: runs `action`, shows the envelope's message on failure. */
import { useState, type FormEvent } from 'react';
import { useI18n } from '../i18n';
import { errorText } from './toast';

export function useSubmit(action: () => Promise<void>) {
  const { t } = useI18n();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const submit = async (e?: FormEvent) => {
    e?.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (err) {
      setError(errorText(err, t));
    } finally {
      setBusy(false);
    }
  };
  return { submit, busy, error };
}
