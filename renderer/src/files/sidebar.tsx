/** Storages with their use (bytes and file count), refreshed when the open folder changes. */
import { useEffect, useState } from 'react';
import type { StorageQuota } from '../api/types';
import { useI18n } from '../i18n';
import { formatBytes } from '../lib/format';
import { linkClick } from '../lib/router';
import { routeOf, storageOf } from '../lib/ui-path';
import { quotas } from './file-api';

export function Sidebar({ path, tick }: { path: string; tick: number }) {
  const { t } = useI18n();
  const [rows, setRows] = useState<StorageQuota[] | null>(null);
  useEffect(() => {
    let live = true;
    quotas().then((r) => live && setRows(r), () => live && setRows([]));
    return () => {
      live = false;
    };
  }, [tick]);
  const current = storageOf(path);
  const max = Math.max(1, ...(rows ?? []).map((r) => r.used_bytes));
  return (
    <aside className="sidebar" aria-label={t('quota.title')}>
      <h2 className="side-title">{t('files.root')}</h2>
      <ul>
        {rows?.map((r) => (
          <li key={r.name}>
            <a href={routeOf(`/${r.name}`)} onClick={linkClick} aria-current={current === r.name ? 'location' : undefined}>{r.name}</a>
            <div className="meter" role="meter" aria-valuemin={0} aria-valuemax={max} aria-valuenow={r.used_bytes} aria-label={r.name}>
              <span style={{ width: `${(100 * r.used_bytes) / max}%` }} />
            </div>
            <small>{t('quota.used', { used: formatBytes(r.used_bytes), n: r.file_count })}</small>
          </li>
        ))}
      </ul>
    </aside>
  );
}
