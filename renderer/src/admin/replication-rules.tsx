/**
 * Replication rules: an ordered list (lower priority first; the first enabled
 * match decides). Rows reorder by HTML5 drag and drop or, from the keyboard,
 * with the up/down buttons; a new order is saved as priorities 10, 20, 30…
 * Add/edit in a dialog, where a 400's `details.field` is shown at its field.
 */
import { useState, type DragEvent, type FormEvent } from 'react';
import { ApiError } from '../api/client';
import type { ReplicaMode, ReplicaRule } from '../../../server/contract';
import { useI18n } from '../i18n';
import { Dialog } from '../ui/dialog';
import { ConfirmDialog } from '../ui/forms';
import { errorText, useToast } from '../ui/toast';
import * as admin from './admin-api';
import { reorder } from './rule-order';

interface Props {
  rules: ReplicaRule[];
  modes: ReplicaMode[];
  /** Reads the rules again; resolves once the list shows them. */
  reload: () => Promise<void>;
}

export function RulesCard({ rules, modes, reload }: Props) {
  const { t } = useI18n();
  const toast = useToast();
  const [editing, setEditing] = useState<ReplicaRule | 'new' | null>(null);
  const [removing, setRemoving] = useState<ReplicaRule | null>(null);
  const [dragFrom, setDragFrom] = useState<number | null>(null);
  const [over, setOver] = useState<number | null>(null);

  const move = async (from: number, to: number) => {
    if (to < 0 || to >= rules.length || from === to) return;
    try {
      for (const x of reorder(rules, from, to)) await admin.saveReplicaRule(x.id, { priority: x.priority });
      toast.info(t('replica.order_saved'));
    } catch (e) {
      toast.error(e);
    }
    await reload();
  };
  const drop = (to: number) => (e: DragEvent) => {
    e.preventDefault();
    const from = dragFrom ?? Number(e.dataTransfer.getData('text/plain'));
    setDragFrom(null);
    setOver(null);
    if (Number.isInteger(from)) void move(from, to);
  };

  return (
    <section className="card" aria-label={t('replica.rules')}>
      <h2>{t('replica.rules')}</h2>
      <p className="hint">{t('replica.rules_hint')}</p>
      <div className="toolbar">
        <button type="button" className="primary" onClick={() => setEditing('new')}>
          {t('replica.rule_add')}
        </button>
      </div>
      {rules.length === 0 ? (
        <p className="muted">{t('replica.no_rules')}</p>
      ) : (
        <ol className="rule-list" aria-label={t('replica.rules')}>
          {rules.map((r, i) => (
            <li
              key={r.id}
              data-testid={`rule-${r.path_pattern}`}
              draggable
              className={over === i ? 'drag-over' : undefined}
              onDragStart={(e) => {
                setDragFrom(i);
                e.dataTransfer.effectAllowed = 'move';
                e.dataTransfer.setData('text/plain', String(i));
              }}
              onDragOver={(e) => {
                e.preventDefault();
                setOver(i);
              }}
              onDragLeave={() => setOver(null)}
              onDrop={drop(i)}
              onDragEnd={() => {
                setDragFrom(null);
                setOver(null);
              }}
            >
              <span className="drag-handle" aria-hidden="true">
                ⋮⋮
              </span>
              <code>{r.path_pattern}</code>
              <span className="pill">{t(`replica.mode.${r.mode}`)}</span>
              {!r.enabled && <span className="pill">{t('replica.disabled')}</span>}
              {r.description && <span className="muted">{r.description}</span>}
              <span className="row-actions">
                <button
                  type="button"
                  className="small"
                  aria-label={t('replica.move_up', { pattern: r.path_pattern })}
                  disabled={i === 0}
                  onClick={() => void move(i, i - 1)}
                >
                  ↑
                </button>
                <button
                  type="button"
                  className="small"
                  aria-label={t('replica.move_down', { pattern: r.path_pattern })}
                  disabled={i === rules.length - 1}
                  onClick={() => void move(i, i + 1)}
                >
                  ↓
                </button>
                <button type="button" className="small" onClick={() => setEditing(r)}>
                  {t('common.edit')}
                </button>
                <button type="button" className="small danger" onClick={() => setRemoving(r)}>
                  {t('common.delete')}
                </button>
              </span>
            </li>
          ))}
        </ol>
      )}
      {editing && (
        <RuleForm rule={editing === 'new' ? null : editing} modes={modes} next={(rules.length + 1) * 10} onSaved={reload} onClose={() => setEditing(null)} />
      )}
      {removing && (
        <ConfirmDialog
          title={t('common.delete')}
          text={t('replica.rule_confirm_delete', { pattern: removing.path_pattern })}
          confirmLabel={t('common.delete')}
          danger
          onConfirm={() => void admin.deleteReplicaRule(removing.id).then(reload, toast.error)}
          onClose={() => setRemoving(null)}
        />
      )}
    </section>
  );
}

function RuleForm({
  rule,
  modes,
  next,
  onSaved,
  onClose,
}: {
  rule: ReplicaRule | null;
  modes: ReplicaMode[];
  next: number;
  onSaved: () => Promise<void>;
  onClose: () => void;
}) {
  const { t } = useI18n();
  const [v, setV] = useState({
    path_pattern: rule?.path_pattern ?? '',
    mode: rule?.mode ?? modes[0] ?? 'mirror',
    priority: String(rule?.priority ?? next),
    enabled: rule?.enabled ?? true,
    description: rule?.description ?? '',
  });
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  // A 400 names its field: shown under that input, anything else above the buttons.
  const field = error instanceof ApiError ? String(error.details.field ?? '') : '';
  const at = (f: string) =>
    field === f ? (
      <small className="error" role="alert">
        {errorText(error, t)}
      </small>
    ) : null;
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await admin.saveReplicaRule(rule?.id ?? null, { ...v, priority: Number(v.priority), description: v.description.trim() || null });
      // Closed once the list is read again: a next "Add rule" then proposes the priority after this one's
      // (on a slow server a dialog opened before the re-read proposed the same priority twice).
      await onSaved();
      onClose();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog title={rule ? t('replica.rule_edit') : t('replica.rule_add')} onClose={onClose}>
      <form className="form" onSubmit={submit}>
        <label>
          {t('replica.pattern')} *
          <input
            required
            value={v.path_pattern}
            aria-invalid={field === 'path_pattern'}
            placeholder="Home/photos/**"
            onChange={(e) => setV({ ...v, path_pattern: e.target.value })}
          />
          <small className="hint">{t('replica.pattern_hint')}</small>
          {at('path_pattern')}
        </label>
        <label>
          {t('replica.mode')}
          <select value={v.mode} aria-invalid={field === 'mode'} onChange={(e) => setV({ ...v, mode: e.target.value as ReplicaMode })}>
            {modes.map((m) => (
              <option key={m} value={m}>
                {t(`replica.mode.${m}`)}
              </option>
            ))}
          </select>
          {at('mode')}
        </label>
        <label>
          {t('replica.priority')}
          <input type="number" value={v.priority} onChange={(e) => setV({ ...v, priority: e.target.value })} />
          {at('priority')}
        </label>
        <label>
          {t('replica.description')}
          <input value={v.description} onChange={(e) => setV({ ...v, description: e.target.value })} />
        </label>
        <label className="check">
          <input type="checkbox" checked={v.enabled} onChange={(e) => setV({ ...v, enabled: e.target.checked })} />
          {t('storage.enabled')}
        </label>
        {error && !['path_pattern', 'mode', 'priority'].includes(field) ? (
          <p className="error" role="alert">
            {errorText(error, t)}
          </p>
        ) : null}
        <div className="actions">
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
