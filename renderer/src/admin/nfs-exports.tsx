/**
 * Admin → Gateways → NFS: the warning that NFSv3 trusts the network (always
 * shown), the exports (add, edit, delete) each with its mount commands to
 * copy, and the NFS clients connected now (from `GET /api/admin/gateways`,
 * which the gateway fills per connection).
 */
import { useCallback, useEffect, useState } from 'react';
import type { GatewayListenerView, GatewaySessionView, NfsExportView } from '../../../server/contract';
import type { User } from '../api/types';
import { useI18n } from '../i18n';
import { nfsEndpoint, nfsMountCommands } from '../lib/nfs-mount';
import { CopyField } from '../ui/copy-field';
import { ConfirmDialog } from '../ui/forms';
import { errorText, useToast } from '../ui/toast';
import { users as listUsers } from './admin-api';
import { deleteNfsExport, nfsExports } from './nfs-api';
import { NfsExportForm } from './nfs-export-form';
import './nfs-exports.css';

type Dialog = { kind: 'add' } | { kind: 'edit'; e: NfsExportView } | { kind: 'delete'; e: NfsExportView } | null;

export function NfsExports({ gateway, sessions }: { gateway: GatewayListenerView | undefined; sessions: GatewaySessionView[] }) {
  const { t } = useI18n();
  const toast = useToast();
  const [list, setList] = useState<NfsExportView[] | null>(null);
  const [names, setNames] = useState<Map<number, string>>(new Map());
  const [error, setError] = useState<unknown>(null);
  const [dialog, setDialog] = useState<Dialog>(null);
  const reload = useCallback(() => void nfsExports().then(setList, setError), []);
  useEffect(reload, [reload]);
  useEffect(
    () =>
      void listUsers('')
        .then((u: User[]) => setNames(new Map(u.map((x) => [x.id, x.username]))))
        .catch(() => undefined),
    [list],
  );

  const endpoint = gateway?.enabled && !gateway.error ? nfsEndpoint(gateway.url, location.hostname) : null;
  const connected = sessions.filter((s) => s.protocol === 'nfs');
  return (
    <section className="card nfs" aria-label={t('nfs.title')}>
      <h2>{t('nfs.title')}</h2>
      <p className="warn nfs-warning" role="note" data-testid="nfs-warning">
        {t('nfs.warning')}
      </p>
      {!gateway?.enabled && <p className="hint">{t('nfs.off')}</p>}
      {error ? (
        <p className="error" role="alert">
          {errorText(error, t)}
        </p>
      ) : !list ? (
        <p className="muted">{t('common.loading')}</p>
      ) : list.length === 0 ? (
        <p className="muted">{t('nfs.none')}</p>
      ) : (
        <ul className="nfs-exports">
          {list.map((e) => (
            <li key={e.id} className="nfs-export" aria-label={e.path} data-testid={`nfs-export-${e.id}`}>
              <div className="nfs-export-head">
                <strong className="nfs-path">{e.path}</strong>
                <span className={e.read_only ? 'badge' : 'badge rw'}>{e.read_only ? t('nfs.ro') : t('nfs.rw')}</span>
                <span className="nfs-export-actions">
                  <button type="button" onClick={() => setDialog({ kind: 'edit', e })}>
                    {t('nfs.edit')}
                  </button>
                  <button type="button" className="danger" onClick={() => setDialog({ kind: 'delete', e })}>
                    {t('nfs.delete')}
                  </button>
                </span>
              </div>
              <p className="nfs-meta">
                <code>{e.clients}</code> · {t('nfs.as', { user: names.get(e.user_id) ?? `#${e.user_id}` })}
                {e.key_id !== null && t('nfs.with_key', { id: e.key_id })}
              </p>
              {endpoint ? (
                <details className="nfs-mount">
                  <summary>{t('nfs.mount')}</summary>
                  {nfsMountCommands(endpoint.host, endpoint.port, e.mount_path).map((c) => (
                    <CopyField key={c.label} label={c.label} value={c.value} />
                  ))}
                </details>
              ) : (
                <p className="hint">{t('nfs.mount_off')}</p>
              )}
            </li>
          ))}
        </ul>
      )}
      <div className="actions">
        <button type="button" className="primary" onClick={() => setDialog({ kind: 'add' })}>
          {t('nfs.add')}
        </button>
      </div>
      <h3>{t('nfs.connected')}</h3>
      {connected.length === 0 ? (
        <p className="muted">{t('nfs.connected_none')}</p>
      ) : (
        <ul className="nfs-connected" data-testid="nfs-connected">
          {connected.map((s) => (
            <li key={`${s.user}-${s.ip}-${s.since}`}>{t('nfs.connected_since', { user: s.user, ip: s.ip, since: new Date(s.since).toLocaleString() })}</li>
          ))}
        </ul>
      )}
      {(dialog?.kind === 'add' || dialog?.kind === 'edit') && (
        <NfsExportForm initial={dialog.kind === 'edit' ? dialog.e : null} onSaved={reload} onClose={() => setDialog(null)} />
      )}
      {dialog?.kind === 'delete' && (
        <ConfirmDialog
          title={t('nfs.delete_title')}
          text={t('nfs.delete_text', { path: dialog.e.path })}
          confirmLabel={t('nfs.delete')}
          danger
          onConfirm={() => void deleteNfsExport(dialog.e.id).then(reload, (err) => toast.error(err))}
          onClose={() => setDialog(null)}
        />
      )}
    </section>
  );
}
