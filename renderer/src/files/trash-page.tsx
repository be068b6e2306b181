/**
 * The trash: what was deleted on the storages the person may change, with
 * restore (back to where it was), delete for good, and "empty trash".
 * Each bulk answer is per item, so partial failures are named.
 */
import { useCallback, useEffect, useState } from 'react';
import { useI18n } from '../i18n';
import { formatBytes, formatDate } from '../lib/format';
import { ConfirmDialog } from '../ui/forms';
import { errorText, useToast } from '../ui/toast';
import { FileIcon } from './icons';
import { listTrash, purgeItems, restoreItems, type TrashItem } from './trash-api';

type Confirm = { kind: 'purge'; ids: number[] } | { kind: 'empty' } | null;

export function TrashPage() {
  const { t, lang } = useI18n();
  const toast = useToast();
  const [items, setItems] = useState<TrashItem[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [chosen, setChosen] = useState<Set<number>>(new Set());
  const [confirm, setConfirm] = useState<Confirm>(null);
  const [busy, setBusy] = useState(false);

  const load = useCallback(() => {
    listTrash().then((r) => {
      setItems(r.items);
      setChosen((c) => new Set([...c].filter((id) => r.items.some((i) => i.id === id))));
    }, setError);
  }, []);
  useEffect(load, [load]);

  const nameOf = (id: number) => items?.find((i) => i.id === id)?.name ?? String(id);
  const report = (done: number, key: 'trash.restored' | 'trash.purged', failed: Array<{ id: number; error: string }>) => {
    if (done) toast.info(t(key, { n: done }));
    for (const f of failed) toast.error(new Error(t('trash.failed', { name: nameOf(f.id), error: f.error })));
  };
  const run = async (fn: () => Promise<void>) => {
    setBusy(true);
    try {
      await fn();
    } catch (e) {
      toast.error(e);
    } finally {
      setBusy(false);
      load();
    }
  };
  const restore = (ids: number[]) =>
    run(async () => {
      const r = await restoreItems(ids);
      report(r.restored.length, 'trash.restored', r.failed);
    });
  const purge = (ids: number[] | 'all') =>
    run(async () => {
      const r = await purgeItems(ids);
      report(r.purged.length, 'trash.purged', r.failed);
    });

  const all = items ?? [];
  const toggle = (id: number) => setChosen((c) => (c.has(id) ? new Set([...c].filter((x) => x !== id)) : new Set([...c, id])));
  const ids = [...chosen];

  return (
    <section className="page" aria-labelledby="trash-title">
      <h1 id="trash-title">{t('trash.title')}</h1>
      <p className="hint">{t('trash.retention')}</p>
      {error ? (
        <p className="error" role="alert">
          {errorText(error, t)}
        </p>
      ) : null}
      <div className="toolbar trash-bar">
        <button type="button" disabled={!ids.length || busy} onClick={() => void restore(ids)}>
          {t('trash.restore')}
        </button>
        <button type="button" className="danger" disabled={!ids.length || busy} onClick={() => setConfirm({ kind: 'purge', ids })}>
          {t('trash.purge')}
        </button>
        <span className="grow" />
        <span className="muted" aria-live="polite">
          {t('trash.count', { n: all.length })}
        </span>
        <button type="button" className="danger" disabled={!all.length || busy} onClick={() => setConfirm({ kind: 'empty' })}>
          {t('trash.empty_all')}
        </button>
      </div>
      {items && all.length === 0 && <p className="empty">{t('trash.empty')}</p>}
      {all.length > 0 && (
        <div className="table-wrap">
          <table className="table" data-testid="trash-table">
            <thead>
              <tr>
                <th scope="col">
                  <input
                    type="checkbox"
                    aria-label={t('trash.select_all')}
                    checked={chosen.size === all.length}
                    onChange={(e) => setChosen(new Set(e.target.checked ? all.map((i) => i.id) : []))}
                  />
                </th>
                <th scope="col">{t('trash.name')}</th>
                <th scope="col">{t('trash.from')}</th>
                <th scope="col">{t('trash.size')}</th>
                <th scope="col">{t('trash.when')}</th>
                <th scope="col">{t('trash.by')}</th>
                <th scope="col">
                  <span className="sr-only">{t('trash.restore')}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {all.map((i) => (
                <tr key={i.id} className={chosen.has(i.id) ? 'selected' : undefined}>
                  <td>
                    <input type="checkbox" aria-label={t('trash.select', { name: i.name })} checked={chosen.has(i.id)} onChange={() => toggle(i.id)} />
                  </td>
                  <td className="wrap">
                    <span className="c-name">
                      <FileIcon entry={{ name: i.name, type: i.type }} /> {i.name}
                    </span>
                    {i.reason === 'infected' && <span className="pill expired">{t('trash.reason.infected')}</span>}
                  </td>
                  <td className="wrap muted">{i.path.slice(0, i.path.lastIndexOf('/')) || '/'}</td>
                  <td>{i.type === 'dir' ? '' : formatBytes(i.size)}</td>
                  <td>{formatDate(i.deleted_at, lang)}</td>
                  <td className="muted">{i.deleted_by ?? ''}</td>
                  <td>
                    <button type="button" className="small" disabled={busy} onClick={() => void restore([i.id])}>
                      {t('trash.restore')}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {confirm && (
        <ConfirmDialog
          title={t(confirm.kind === 'empty' ? 'trash.empty_all' : 'trash.purge')}
          text={confirm.kind === 'empty' ? t('trash.confirm_empty', { n: all.length }) : t('trash.confirm_purge', { n: confirm.ids.length })}
          confirmLabel={t(confirm.kind === 'empty' ? 'trash.empty_all' : 'trash.purge')}
          danger
          onClose={() => setConfirm(null)}
          onConfirm={() => void purge(confirm.kind === 'empty' ? 'all' : confirm.ids)}
        />
      )}
    </section>
  );
}
