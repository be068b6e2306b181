/** Settings → Home folders: whether new people get one, on which storage and under which folder (`/api/admin/homes`). */
import { useEffect, useState, type FormEvent } from 'react';
import type { AdminStorage } from '../api/types';
import { useI18n } from '../i18n';
import { useToast } from '../ui/toast';
import * as admin from './admin-api';
import { Section, useSection } from './section';

export function HomesSection() {
  const { t } = useI18n();
  const toast = useToast();
  const [h, error, missing, setH] = useSection(admin.homes);
  const [storages, setStorages] = useState<AdminStorage[]>([]);
  const [folder, setFolder] = useState('');
  useEffect(() => void admin.storages().then(setStorages, () => setStorages([])), []);
  useEffect(() => {
    if (h) setFolder(h.folder);
  }, [h]);
  const patch = async (body: Parameters<typeof admin.patchHomes>[0]) => {
    try {
      setH(await admin.patchHomes(body));
      toast.info(t('settings.saved'));
    } catch (err) {
      toast.error(err);
    }
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void patch({ folder });
  };
  const fallback = storages.find((s) => s.id === h?.effective_storage?.id && h?.storage_id === null)?.name ?? h?.effective_storage?.name ?? '';
  return (
    <Section title={t('settings.homes')} missing={missing} error={error}>
      {h && (
        <form className="form" onSubmit={submit}>
          <label className="check full">
            <input type="checkbox" checked={h.enabled} onChange={(e) => void patch({ enabled: e.target.checked })} />
            {t('settings.homes_enabled')}
          </label>
          <label>
            {t('settings.homes_storage')}
            <select
              value={h.storage_id ?? ''}
              disabled={!h.enabled}
              onChange={(e) => void patch({ storage_id: e.target.value ? Number(e.target.value) : null })}
            >
              <option value="">{t('settings.homes_default', { name: h.storage_id === null ? fallback : '…' })}</option>
              {storages.map((s) => (
                <option key={s.id} value={s.id}>
                  {s.name}
                </option>
              ))}
            </select>
          </label>
          <label>
            {t('settings.homes_folder')}
            <input value={folder} disabled={!h.enabled} onChange={(e) => setFolder(e.target.value)} />
          </label>
          <p className="hint full">{h.effective_storage ? t('settings.homes_hint', { folder: h.folder }) : t('settings.homes_none')}</p>
          <div className="actions full">
            <button type="submit" className="primary" disabled={!h.enabled || folder === h.folder}>
              {t('common.save')}
            </button>
          </div>
        </form>
      )}
    </Section>
  );
}
