/** Settings → Backups of Filedock: schedule (cron), how many to keep, the target folder, "back up now" and the archives there. */
import { useEffect, useState, type FormEvent } from 'react';
import { formatBytes, formatDate } from '../lib/format';
import { useI18n } from '../i18n';
import { useToast } from '../ui/toast';
import * as admin from './admin-api';
import { Section, useSection } from './section';

const POLL_MS = 1000;
const POLLS = 300;

export function BackupsSection() {
  const { t, lang } = useI18n();
  const toast = useToast();
  const [v, error, missing, setV] = useSection(admin.backups);
  const [f, setF] = useState({ cron: '', keep: '', target: '' });
  useEffect(() => {
    if (v) setF({ cron: v.settings.cron, keep: String(v.settings.keep), target: v.settings.target });
  }, [v]);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    try {
      setV(await admin.patchBackups({ cron: f.cron, keep: Number(f.keep), target: f.target }));
      toast.info(t('settings.saved'));
    } catch (err) {
      toast.error(err);
    }
  };
  const now = async () => {
    const before = v?.last?.at;
    try {
      await admin.backupNow();
      toast.info(t('backups.queued'));
    } catch (err) {
      return toast.error(err);
    }
    // The op runs in the background: show the new archive once it is there (a backup takes seconds to minutes).
    for (let i = 0; i < POLLS; i++) {
      await new Promise((r) => setTimeout(r, POLL_MS));
      const next = await admin.backups().catch(() => null);
      if (next && next.last?.at !== before) return setV(next);
    }
  };
  return (
    <Section title={t('backups.title')} missing={missing} error={error}>
      {v && (
        <form className="form two-col" onSubmit={submit} data-testid="backups-settings">
          <p className="hint full">{t('backups.hint')}</p>
          <label>
            {t('backups.cron')}
            <input value={f.cron} placeholder="0 3 * * *" onChange={(e) => setF({ ...f, cron: e.target.value })} />
          </label>
          <label>
            {t('backups.keep')}
            <input type="number" min={1} max={1000} value={f.keep} onChange={(e) => setF({ ...f, keep: e.target.value })} />
          </label>
          <label className="full">
            {t('backups.target')}
            <input value={f.target} placeholder="/Files/Backups" onChange={(e) => setF({ ...f, target: e.target.value })} />
          </label>
          <div className="actions full">
            <button type="submit" className="primary">
              {t('common.save')}
            </button>
            <button type="button" disabled={!v.settings.target} onClick={() => void now()}>
              {t('backups.now')}
            </button>
          </div>
          {v.list_error && <p className="error full">{t('backups.list_error', { reason: v.list_error })}</p>}
          {v.settings.target &&
            !v.list_error &&
            (v.backups.length === 0 ? (
              <p className="muted full">{t('backups.none')}</p>
            ) : (
              <ul className="full" aria-label={t('backups.title')}>
                {v.backups.map((b) => (
                  <li key={b.name}>
                    {b.name} · {formatBytes(b.size)} · {formatDate(b.mtime, lang)}
                  </li>
                ))}
              </ul>
            ))}
          <p className="hint full">{t('backups.restore_hint')}</p>
        </form>
      )}
    </Section>
  );
}
