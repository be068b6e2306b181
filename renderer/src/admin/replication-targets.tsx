/**
 * Replication targets: the list (with the storages linked to each), add/edit
 * through the same descriptor-driven fields as storages (the server probes a
 * target before it saves it), delete (unlinks its storages), and a per-storage
 * select that links a storage to a target (`replica_target_id`).
 */
import { useState } from 'react';
import type { AdminStorage, DriverDescriptor } from '../api/types';
import type { ReplicaTarget, ReplicaTargetMode } from '../../../server/contract';
import { useI18n } from '../i18n';
import { Dialog } from '../ui/dialog';
import { ConfirmDialog } from '../ui/forms';
import { useToast } from '../ui/toast';
import * as admin from './admin-api';
import { DriverFields } from './driver-fields';
import { useSubmit } from '../ui/use-submit';
import { initialValues, missingRequired, toConfig, type FormValues } from './driver-form';

interface Props {
  targets: ReplicaTarget[];
  storages: AdminStorage[];
  descriptors: DriverDescriptor[];
  /** Re-reads targets and storages after a change. */
  reload: () => void;
}

export function TargetsCard({ targets, storages, descriptors, reload }: Props) {
  const { t } = useI18n();
  const toast = useToast();
  const [editing, setEditing] = useState<ReplicaTarget | 'new' | null>(null);
  const [removing, setRemoving] = useState<ReplicaTarget | null>(null);
  const nameOf = (id: number) => storages.find((s) => s.id === id)?.name ?? String(id);
  const link = (s: AdminStorage, value: string) => void admin.linkReplica(s.id, value ? Number(value) : null).then(reload, toast.error);
  return (
    <section className="card" id="replica-targets" aria-label={t('replica.targets')}>
      <h2>{t('replica.targets')}</h2>
      <div className="toolbar">
        <button type="button" className="primary" disabled={!descriptors.length} onClick={() => setEditing('new')}>
          {t('replica.target_add')}
        </button>
      </div>
      {targets.length === 0 ? (
        <p className="muted">{t('replica.no_targets')}</p>
      ) : (
        <div className="table-wrap">
          <table className="table">
            <thead>
              <tr>
                <th scope="col">{t('storage.name')}</th>
                <th scope="col">{t('storage.driver')}</th>
                <th scope="col">{t('replica.target_mode')}</th>
                <th scope="col">{t('replica.linked')}</th>
                <th scope="col">
                  <span className="sr-only">{t('files.actions', { name: '' })}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {targets.map((x) => (
                <tr key={x.id} data-testid={`target-${x.name}`}>
                  <td>
                    <strong>{x.name}</strong> {!x.enabled && <span className="pill">{t('replica.disabled')}</span>}
                    {x.config_summary && <div className="muted">{x.config_summary}</div>}
                  </td>
                  <td>{x.driver}</td>
                  <td>{t(`replica.target_mode.${x.mode}`)}</td>
                  <td>{x.storage_ids.map(nameOf).join(', ') || '—'}</td>
                  <td>
                    <div className="row-actions">
                      <button type="button" className="small" onClick={() => setEditing(x)}>
                        {t('common.edit')}
                      </button>
                      <button type="button" className="small danger" onClick={() => setRemoving(x)}>
                        {t('common.delete')}
                      </button>
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <h3>{t('replica.links')}</h3>
      <p className="hint">{t('replica.links_hint')}</p>
      <div className="form two-col">
        {storages.map((s) => (
          <label key={s.id}>
            {t('replica.link_of', { name: s.name })}
            <select value={s.replica_target_id ?? ''} onChange={(e) => link(s, e.target.value)}>
              <option value="">{t('replica.not_linked')}</option>
              {targets.map((x) => (
                <option key={x.id} value={x.id}>
                  {x.name}
                </option>
              ))}
            </select>
          </label>
        ))}
      </div>
      {editing && <TargetForm descriptors={descriptors} target={editing === 'new' ? null : editing} onSaved={reload} onClose={() => setEditing(null)} />}
      {removing && (
        <ConfirmDialog
          title={t('common.delete')}
          text={t('replica.target_confirm_delete', { name: removing.name })}
          confirmLabel={t('common.delete')}
          danger
          onConfirm={() => void admin.deleteReplicaTarget(removing.id).then(reload, toast.error)}
          onClose={() => setRemoving(null)}
        />
      )}
    </section>
  );
}

function TargetForm({
  descriptors,
  target,
  onSaved,
  onClose,
}: {
  descriptors: DriverDescriptor[];
  target: ReplicaTarget | null;
  onSaved: () => void;
  onClose: () => void;
}) {
  const { t } = useI18n();
  const [driver, setDriver] = useState(target?.driver ?? descriptors[0]?.driver ?? '');
  const d = descriptors.find((x) => x.driver === driver);
  const [values, setValues] = useState<FormValues>(() => (d ? initialValues(d, target?.config) : {}));
  const [name, setName] = useState(target?.name ?? '');
  const [mode, setMode] = useState<ReplicaTargetMode>(target?.mode ?? 'async');
  const [enabled, setEnabled] = useState(target?.enabled ?? true);
  const pickDriver = (n: string) => {
    setDriver(n);
    const nd = descriptors.find((x) => x.driver === n);
    setValues(nd ? initialValues(nd) : {});
  };
  const { submit, busy, error } = useSubmit(async () => {
    if (d && missingRequired(d, values).length) return;
    await admin.saveReplicaTarget(target?.id ?? null, {
      name: name.trim(),
      ...(target ? {} : { driver }),
      config: d ? toConfig(d, values) : {},
      mode,
      enabled,
    });
    onSaved();
    onClose();
  });
  return (
    <Dialog title={target ? t('replica.target_edit', { name: target.name }) : t('replica.target_add')} onClose={onClose} wide>
      <form className="form two-col" onSubmit={submit}>
        <label>
          {t('storage.name')} *<input required value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <label>
          {t('storage.driver')}
          <select value={driver} onChange={(e) => pickDriver(e.target.value)} disabled={!!target}>
            {descriptors.map((x) => (
              <option key={x.driver} value={x.driver}>
                {x.label || x.driver}
              </option>
            ))}
          </select>
        </label>
        <DriverFields descriptor={d} values={values} onChange={setValues} editing={!!target} />
        <label>
          {t('replica.target_mode')}
          <select value={mode} onChange={(e) => setMode(e.target.value as ReplicaTargetMode)}>
            <option value="async">{t('replica.target_mode.async')}</option>
            <option value="sync">{t('replica.target_mode.sync')}</option>
          </select>
        </label>
        <label className="check">
          <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} />
          {t('storage.enabled')}
        </label>
        <p className="hint full">{t('replica.target_probe_hint')}</p>
        <div className="full" aria-live="polite">
          {error && (
            <p className="error" role="alert">
              {error}
            </p>
          )}
        </div>
        <div className="actions full">
          <button type="button" onClick={onClose}>
            {t('common.cancel')}
          </button>
          <button type="submit" className="primary" disabled={busy}>
            {t('common.save')}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
