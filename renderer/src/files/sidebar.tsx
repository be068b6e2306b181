/**
 * The sidebar: the folder tree, then each storage's use (bytes and file
 * count), re-read after every write so an upload shows at once.
 */
import { useEffect, useState, type DragEvent } from 'react';
import type { StorageQuota } from '../api/types';
import { useI18n } from '../i18n';
import { formatBytes } from '../lib/format';
import { linkClick } from '../lib/router';
import { withBase } from '../lib/base';
import { routeOf, storageOf } from '../lib/ui-path';
import { quotas } from './file-api';
import { FolderTree } from './folder-tree';

export function Sidebar({ path, tick, onDropInto }: { path: string; tick: number; onDropInto: (dest: string, ev: DragEvent) => void }) {
  const { t } = useI18n();
  const [rows, setRows] = useState<StorageQuota[] | null>(null);
  useEffect(() => {
    let live = true;
    quotas().then(
      (r) => live && setRows(r),
      () => live && setRows([]),
    );
    return () => {
      live = false;
    };
  }, [tick]);
  const current = storageOf(path);
  const max = Math.max(1, ...(rows ?? []).map((r) => r.used_bytes));
  return (
    <aside className="sidebar">
      <h2 className="side-title">{t('files.tree')}</h2>
      <FolderTree path={path} tick={tick} onDropInto={onDropInto} />
      <section aria-labelledby="quota-title" className="quota" data-testid="quota">
        <h2 className="side-title" id="quota-title">
          {t('quota.title')}
        </h2>
        <ul>
          {rows?.map((r) => (
            <li key={r.name}>
              <a href={withBase(routeOf(`/${r.name}`))} onClick={linkClick} aria-current={current === r.name ? 'location' : undefined}>
                {r.name}
              </a>
              <div
                className="meter"
                role="meter"
                aria-valuemin={0}
                aria-valuemax={max}
                aria-valuenow={r.used_bytes}
                aria-label={r.name}
                aria-describedby="quota-hint"
              >
                <span style={{ width: `${(100 * r.used_bytes) / max}%` }} />
              </div>
              <small>{t('quota.used', { used: formatBytes(r.used_bytes), n: r.file_count })}</small>
            </li>
          ))}
        </ul>
        <p className="hint" id="quota-hint">
          {t('quota.bar_hint')}
        </p>
      </section>
    </aside>
  );
}
