/** An address the web app does not know: says so, with the way back, and no file toolbar to act on. */
import { useI18n } from '../i18n';
import { linkClick } from '../lib/router';
import { withBase } from '../lib/base';

export function NotFoundPage({ path }: { path: string }) {
  const { t } = useI18n();
  return (
    <section className="not-found" aria-labelledby="not-found-title" data-testid="not-found">
      <h1 id="not-found-title">{t('notfound.title')}</h1>
      <p>{t('notfound.text', { path })}</p>
      <p>
        <a className="button primary" href={withBase('/files')} onClick={linkClick}>
          {t('notfound.back')}
        </a>
      </p>
    </section>
  );
}
