/** A settings card: loads its data, and says so plainly when this server lacks the feature (404/501). */
import { useEffect, useState, type ReactNode } from 'react';
import { ApiError } from '../api/client';
import { useI18n } from '../i18n';
import { errorText } from '../ui/toast';

/** Loads a section once: `[data, error, missing, setData]`; `missing` when the server lacks the feature. */
export function useSection<T>(load: () => Promise<T>): [T | null, unknown, boolean, (v: T) => void] {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => void load().then(setData, setError), []);
  const missing = error instanceof ApiError && [404, 501].includes(error.status);
  return [data, missing ? null : error, missing, setData];
}

export function Section({ title, missing, error, children }: { title: string; missing: boolean; error: unknown; children: ReactNode }) {
  const { t } = useI18n();
  return (
    <section className="card" aria-label={title}>
      <h2>{title}</h2>
      {missing ? (
        <p className="muted">{t('settings.not_available')}</p>
      ) : error ? (
        <p className="error" role="alert">
          {errorText(error, t)}
        </p>
      ) : (
        children
      )}
    </section>
  );
}
