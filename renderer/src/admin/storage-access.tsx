/**
 * Admin → Storages → Access: who may open a storage. People and groups are
 * picked by name or e-mail (search as you type), each with a level, and removed;
 * nobody types a numeric id. A switch says whether access control is on (off:
 * every signed-in person may change everything). Home-folder grants are not
 * edited here (the server keeps them when this list is saved); their count is shown.
 * Rows wrap into cards on a phone, so the dialog fits 390 px as well as a laptop.
 */
import { useEffect, useMemo, useState } from 'react';
import type { AdminStorage, Grant, GroupView, User } from '../api/types';
import { useI18n } from '../i18n';
import { Dialog } from '../ui/dialog';
import { errorText, useToast } from '../ui/toast';
import * as admin from './admin-api';
import './storage-access.css';

type Level = Grant['level'];
/** A grant as the dialog shows it: its person (name and e-mail) or group resolved. */
interface Row {
  user?: Pick<User, 'id' | 'email' | 'username'>;
  group?: string;
  level: Level;
}
type Pick_ = { kind: 'user'; user: Pick<User, 'id' | 'email' | 'username'> } | { kind: 'group'; group: GroupView };

const keyOf = (r: Row) => (r.user ? `u${r.user.id}` : `g${r.group}`);

export function StorageAccess({ storage, onClose, onChanged }: { storage: AdminStorage; onClose: () => void; onChanged?: (s: AdminStorage) => void }) {
  const { t } = useI18n();
  const toast = useToast();
  const [rows, setRows] = useState<Row[] | null>(null);
  const [homes, setHomes] = useState(0);
  const [rbac, setRbac] = useState(storage.rbac_enabled);
  const [groups, setGroups] = useState<GroupView[]>([]);
  const [q, setQ] = useState('');
  const [found, setFound] = useState<User[]>([]);
  const [level, setLevel] = useState<Level>('editor');
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    void (async () => {
      try {
        const all = (await admin.grants(storage.id)) as Array<Grant & { path?: string }>;
        const whole = all.filter((g) => !g.path);
        setHomes(all.length - whole.length);
        const people = await Promise.all(
          whole.map((g) => (g.user_id ? admin.user(g.user_id).catch(() => ({ id: g.user_id!, email: '', username: `#${g.user_id}` })) : null)),
        );
        setRows(whole.map((g, i) => (g.user_id ? { user: people[i]!, level: g.level } : { group: g.group ?? '', level: g.level })));
      } catch (e) {
        setError(e);
      }
    })();
    admin.groups().then(setGroups, () => setGroups([]));
  }, [storage.id]);

  // Search as you type: the server matches e-mail or username; a stale answer never overwrites a newer one.
  useEffect(() => {
    const term = q.trim();
    if (!term) return setFound([]);
    let live = true;
    const timer = setTimeout(
      () =>
        admin.users(term).then(
          (u) => live && setFound(u),
          () => live && setFound([]),
        ),
      150,
    );
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [q]);

  const taken = useMemo(() => new Set((rows ?? []).map(keyOf)), [rows]);
  const term = q.trim().toLowerCase();
  const picks: Pick_[] = term
    ? [
        ...found
          .filter((u) => u.role !== 'admin' && !taken.has(`u${u.id}`))
          .slice(0, 8)
          .map((user) => ({ kind: 'user' as const, user })),
        ...groups
          .filter((g) => g.name.toLowerCase().includes(term) && !taken.has(`g${g.name}`))
          .slice(0, 5)
          .map((group) => ({ kind: 'group' as const, group })),
      ]
    : [];

  const add = (p: Pick_) => {
    setRows([...(rows ?? []), p.kind === 'user' ? { user: p.user, level } : { group: p.group.name, level }]);
    setQ('');
  };
  const save = async () => {
    try {
      await admin.putGrants(
        storage.id,
        rows!.map((r) => (r.user ? { user_id: r.user.id, level: r.level } : { group: r.group, level: r.level })),
      );
      if (rbac !== storage.rbac_enabled) onChanged?.(await admin.setRbac(storage.id, rbac));
      toast.info(t('settings.saved'));
      onClose();
    } catch (e) {
      setError(e);
    }
  };

  return (
    <Dialog title={`${t('storage.grants')}: ${storage.name}`} onClose={onClose}>
      <div className="access-dialog">
        {error ? (
          <p className="error" role="alert">
            {errorText(error, t)}
          </p>
        ) : null}
        <label className="check">
          <input type="checkbox" checked={rbac} onChange={(e) => setRbac(e.target.checked)} />
          {t('storage.access.restricted')}
        </label>
        <p className="hint">{rbac ? t('storage.access.restricted_hint') : t('storage.access.open_hint')}</p>
        {rows && (
          <>
            <div className="access-add">
              <label className="access-search">
                {t('storage.access.add_label')}
                <input
                  type="search"
                  role="combobox"
                  aria-expanded={picks.length > 0}
                  aria-controls="access-picks"
                  aria-autocomplete="list"
                  placeholder={t('storage.access.search_placeholder')}
                  value={q}
                  onChange={(e) => setQ(e.target.value)}
                  autoComplete="off"
                />
              </label>
              <label>
                {t('storage.grant.level')}
                <select aria-label={t('storage.grant.level')} value={level} onChange={(e) => setLevel(e.target.value as Level)}>
                  <option value="viewer">{t('storage.grant.viewer')}</option>
                  <option value="editor">{t('storage.grant.editor')}</option>
                </select>
              </label>
            </div>
            {term && (
              <ul id="access-picks" className="access-picks" role="listbox" aria-label={t('storage.access.results')}>
                {picks.length === 0 && <li className="muted">{t('storage.access.no_match')}</li>}
                {picks.map((p) => (
                  <li key={p.kind === 'user' ? `u${p.user.id}` : `g${p.group.name}`} role="option" aria-selected={false}>
                    <button type="button" onClick={() => add(p)}>
                      {p.kind === 'user' ? (
                        <>
                          <strong>{p.user.username}</strong> <span className="muted">{p.user.email}</span>
                        </>
                      ) : (
                        <>
                          <strong>{p.group.name}</strong> <span className="muted">{t('storage.access.group_members', { n: p.group.members.length })}</span>
                        </>
                      )}
                    </button>
                  </li>
                ))}
              </ul>
            )}
            <ul className="access-rows" aria-label={t('storage.access.who')}>
              {rows.length === 0 && <li className="muted">{rbac ? t('storage.access.admins_only') : t('storage.access.everyone')}</li>}
              {rows.map((r, i) => (
                <li key={keyOf(r)} className="access-row">
                  <span className="access-who">
                    {r.user ? (
                      <>
                        <strong>{r.user.username}</strong> <span className="muted">{r.user.email}</span>
                      </>
                    ) : (
                      <>
                        <strong>{r.group}</strong> <span className="muted">{t('storage.access.group')}</span>
                      </>
                    )}
                  </span>
                  <select
                    aria-label={`${t('storage.grant.level')}: ${r.user?.username ?? r.group}`}
                    value={r.level}
                    onChange={(e) => setRows(rows.map((x, j) => (j === i ? { ...x, level: e.target.value as Level } : x)))}
                  >
                    <option value="viewer">{t('storage.grant.viewer')}</option>
                    <option value="editor">{t('storage.grant.editor')}</option>
                  </select>
                  <button
                    type="button"
                    className="small"
                    aria-label={`${t('common.remove')}: ${r.user?.username ?? r.group}`}
                    onClick={() => setRows(rows.filter((_, j) => j !== i))}
                  >
                    {t('common.remove')}
                  </button>
                </li>
              ))}
            </ul>
            {homes > 0 && <p className="hint">{t('storage.access.homes', { n: homes })}</p>}
            <div className="actions">
              <button type="button" onClick={onClose}>
                {t('common.cancel')}
              </button>
              <button type="button" className="primary" onClick={() => void save()}>
                {t('common.save')}
              </button>
            </div>
          </>
        )}
      </div>
    </Dialog>
  );
}
