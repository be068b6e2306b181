/** Storages: list, add/edit, test, sync now, sync runs with their errors, access grants, remove. */
import { useEffect, useState } from 'react';
import type { AdminStorage, DriverDescriptor, SyncRun } from '../api/types';
import { useI18n } from '../i18n';
import { formatDate } from '../lib/format';
import { Dialog } from '../ui/dialog';
import { ConfirmDialog } from '../ui/forms';
import { errorText, useToast } from '../ui/toast';
import * as admin from './admin-api';
import { StorageAccess } from './storage-access';
import { StorageForm } from './storage-form';
import { MeterLine } from './storage-meter';
import { statusWords } from './admin-words';

export function StoragesTab() {
  const { t, lang } = useI18n();
  const toast = useToast();
  const [rows, setRows] = useState<AdminStorage[] | null>(null);
  const [descs, setDescs] = useState<DriverDescriptor[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [editing, setEditing] = useState<AdminStorage | 'new' | null>(null);
  const [runsOf, setRunsOf] = useState<AdminStorage | null>(null);
  const [grantsOf, setGrantsOf] = useState<AdminStorage | null>(null);
  const [removing, setRemoving] = useState<AdminStorage | null>(null);
  const load = () => admin.storages().then(setRows, setError);
  /** Starts a sync and, once its run finished, re-reads the list so "Last sync" moves. */
  const syncNow = async (s: AdminStorage) => {
    try {
      const { run_id } = await admin.syncNow(s.id);
      toast.info(t('storage.sync_started'));
      for (let i = 0; i < 600; i++) {
        await new Promise((r) => setTimeout(r, i < 10 ? 300 : 2000));
        const run = await admin.syncRun(run_id);
        if (run.finished_at) break;
      }
      // The list first: whoever reads "Sync finished." sees the new "Last sync" beside it.
      await load();
      toast.info(t('storage.sync_done'));
    } catch (e) {
      toast.error(e);
    }
  };
  useEffect(() => {
    void load();
    admin.drivers().then(setDescs, setError);
  }, []);

  return (
    <div>
      <div className="toolbar">
        <button type="button" className="primary" disabled={!descs.length} onClick={() => setEditing('new')}>
          {t('storage.add')}
        </button>
      </div>
      {error ? (
        <p className="error" role="alert">
          {errorText(error, t)}
        </p>
      ) : null}
      {rows && (
        <div className="table-wrap">
          <table className="table">
            <thead>
              <tr>
                <th scope="col">{t('storage.name')}</th>
                <th scope="col">{t('storage.driver')}</th>
                <th scope="col">{t('storage.last_sync')}</th>
                <th scope="col">
                  <span className="sr-only">{t('files.actions', { name: '' })}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((s) => (
                <tr key={s.id}>
                  <td>
                    <strong>{s.name}</strong> {(s.readonly || s.read_only) && <span className="pill">{t('storage.readonly')}</span>}
                    {s.status === 'offline' && (
                      <span className="pill offline" title={s.status_reason ?? ''}>
                        {t('storage.offline')}
                      </span>
                    )}
                    {s.config_summary && <div className="muted">{s.config_summary}</div>}
                    {s.status === 'offline' && s.status_reason && (
                      <div className="muted" role="status">
                        ⚠ {s.status_reason}
                      </div>
                    )}
                    {s.driver !== 'local' && <MeterLine storageId={s.id} />}
                  </td>
                  <td>{s.driver}</td>
                  <td>
                    {s.last_sync ? (
                      <time dateTime={s.last_sync} title={s.last_sync}>
                        {formatDate(s.last_sync, lang)}
                      </time>
                    ) : (
                      t('common.never')
                    )}
                  </td>
                  <td>
                    <div className="row-actions">
                      <button type="button" className="small" onClick={() => setEditing(s)}>
                        {t('common.edit')}
                      </button>
                      <button type="button" className="small" onClick={() => void syncNow(s)}>
                        {t('storage.sync')}
                      </button>
                      <button type="button" className="small" onClick={() => setRunsOf(s)}>
                        {t('storage.runs')}
                      </button>
                      <button type="button" className="small" onClick={() => setGrantsOf(s)}>
                        {t('storage.grants')}
                      </button>
                      <button type="button" className="small danger" onClick={() => setRemoving(s)}>
                        {t('common.remove')}
                      </button>
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {editing && <StorageForm descriptors={descs} storage={editing === 'new' ? null : editing} onSaved={load} onClose={() => setEditing(null)} />}
      {runsOf && <SyncRuns storage={runsOf} onClose={() => setRunsOf(null)} />}
      {grantsOf && (
        <StorageAccess storage={grantsOf} onClose={() => setGrantsOf(null)} onChanged={(u) => setRows((rows ?? []).map((r) => (r.id === u.id ? u : r)))} />
      )}
      {removing && (
        <ConfirmDialog
          title={t('common.remove')}
          text={t('storage.confirm_delete', { name: removing.name })}
          confirmLabel={t('common.remove')}
          danger
          onConfirm={() => void admin.deleteStorage(removing.id).then(load, toast.error)}
          onClose={() => setRemoving(null)}
        />
      )}
    </div>
  );
}

function SyncRuns({ storage, onClose }: { storage: AdminStorage; onClose: () => void }) {
  const { t, lang } = useI18n();
  const [runs, setRuns] = useState<SyncRun[] | null>(null);
  const [detail, setDetail] = useState<{ id: number; errors: unknown[] } | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    // A run started with "Sync now" moves on while the dialog is open: refresh until none is in progress.
    let timer: ReturnType<typeof setTimeout>;
    const load = () =>
      admin.syncRuns(storage.id).then((r) => {
        setRuns(r);
        if (r.length === 0 || r.some((x) => !x.finished_at)) timer = setTimeout(load, 2000);
      }, setError);
    void load();
    return () => clearTimeout(timer);
  }, [storage.id]);
  const openDetail = async (id: number) => {
    try {
      const r = (await admin.syncRun(id)) as SyncRun & Record<string, unknown>;
      const list = [r.error_list, r.errors_detail, r.error_details, Array.isArray(r.errors) ? r.errors : null].find(Array.isArray) as unknown[] | undefined;
      setDetail({ id, errors: list ?? [] });
    } catch (e) {
      setError(e);
    }
  };
  return (
    <Dialog title={`${t('storage.runs')}: ${storage.name}`} onClose={onClose} wide>
      {error ? (
        <p className="error" role="alert">
          {errorText(error, t)}
        </p>
      ) : null}
      {runs?.length === 0 && <p className="empty">{t('runs.empty')}</p>}
      {runs && runs.length > 0 && (
        <div className="table-wrap">
          <table className="table">
            <thead>
              <tr>
                {(['runs.status', 'runs.started', 'runs.finished', 'runs.added', 'runs.updated', 'runs.removed', 'runs.errors'] as const).map((k) => (
                  <th key={k} scope="col">
                    {t(k)}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {runs.map((r) => (
                <tr key={r.id}>
                  <td title={r.status}>{statusWords(r.status, t)}</td>
                  <td>{formatDate(r.started_at, lang)}</td>
                  <td>{formatDate(r.finished_at, lang)}</td>
                  <td>{r.added}</td>
                  <td>{r.updated}</td>
                  <td>{r.removed}</td>
                  <td>
                    {r.errors ? (
                      <button type="button" className="link" onClick={() => void openDetail(r.id)}>
                        {String(r.errors)}
                      </button>
                    ) : (
                      0
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {detail && (
        <section aria-label={t('runs.detail', { id: detail.id })}>
          <h3>{t('runs.detail', { id: detail.id })}</h3>
          <ul className="errors">
            {detail.errors.map((e, i) => {
              const o = (e ?? {}) as Record<string, unknown>;
              return (
                <li key={i}>
                  <code>{String(o.path ?? '')}</code> {String(o.message ?? o.error ?? JSON.stringify(e))}
                </li>
              );
            })}
          </ul>
        </section>
      )}
    </Dialog>
  );
}
