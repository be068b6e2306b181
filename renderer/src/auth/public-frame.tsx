/** The centred card of the signed-out pages, with the language and theme switches. */
import type { ReactNode } from 'react';
import { useI18n } from '../i18n';
import { Preferences } from '../ui/preferences';

export function PublicFrame({ title, children }: { title: string; children: ReactNode }) {
  const { t } = useI18n();
  return (
    <main className="public" id="main">
      <section className="card" aria-labelledby="public-title">
        <p className="brand">{t('app.name')}</p>
        <h1 id="public-title">{title}</h1>
        {children}
      </section>
      <Preferences />
    </main>
  );
}
