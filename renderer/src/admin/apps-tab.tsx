/**
 * Admin → Apps (docs/app-plugins.md "Admin routes"): apps for users on or off,
 * the trusted publisher keys, installing a signed package (approving the hosts
 * it declares), and per app: enable, permissions, approved hosts, settings
 * (JSON, refused at the field), upgrade with a newer package, uninstall.
 */
import { useEffect, useState } from 'react';
import { api, ApiError, toApiError } from '../api/client';
import { authHeaders } from '../device/device-key';
import { useI18n, type Translate } from '../i18n';
import { ConfirmDialog } from '../ui/forms';
import { errorText, useToast } from '../ui/toast';
import { forgetActions } from '../apps/apps-api';
import { forgetCapabilities } from '../api/capabilities';

interface AppRow {
  id: string;
  name: string;
  version: string;
  publisher: string;
  description?: string | null;
  digest: string;
  enabled: boolean;
  permissions: string[];
  http_hosts: string[];
  approved_hosts: string[];
  settings: Record<string, unknown>;
  actions: string[];
  views: string[];
  languages: string[];
  installed_at: string;
  updated_at: string;
}
interface KeyRow {
  id: number;
  publisher: string;
  public_key_pem: string;
  added_at?: string;
}

const BASE = '/api/admin/app-plugins';

/** Sends a package ZIP as it is (not JSON); rejects with the envelope's ApiError. */
async function sendPackage(method: 'POST' | 'PUT', url: string, file: File): Promise<AppRow> {
  const res = await fetch(url, {
    method,
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/zip', Accept: 'application/json', ...authHeaders() },
    body: file,
  });
  if (!res.ok) throw await toApiError(res);
  return (await res.json()) as AppRow;
}

/** The envelope's message, with the package's refused field and reason when it names one. */
export function refusalText(e: unknown, t: Translate): string {
  if (e instanceof ApiError && typeof e.details.field === 'string' && typeof e.details.reason === 'string')
    return t('apps.admin.refused', { message: e.message, field: e.details.field, reason: e.details.reason });
  return errorText(e, t);
}

const changed = () => {
  forgetActions();
  forgetCapabilities();
};

export function AppsTab() {
  const { t } = useI18n();
  const [apps, setApps] = useState<AppRow[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const load = () => api<{ apps: AppRow[] }>(`${BASE}/apps`).then((r) => setApps(r.apps), setError);
  useEffect(() => void load(), []);
  const put = (a: AppRow) => setApps((l) => (l ?? []).map((x) => (x.id === a.id ? a : x)));
  return (
    <div className="settings" data-testid="admin-apps">
      <GlobalSwitch />
      <KeysCard />
      <InstallCard onInstalled={(a) => setApps((l) => [...(l ?? []).filter((x) => x.id !== a.id), a])} />
      <section className="card" aria-label={t('apps.admin.installed')}>
        <h2>{t('apps.admin.installed')}</h2>
        {error ? (
          <p className="error" role="alert">
            {errorText(error, t)}
          </p>
        ) : null}
        {apps === null && !error && <p className="muted">{t('common.loading')}</p>}
        {apps?.length === 0 && <p className="muted">{t('apps.admin.none')}</p>}
        {apps?.map((a) => (
          <AppCard key={a.id} app={a} onChange={put} onRemoved={() => setApps((l) => (l ?? []).filter((x) => x.id !== a.id))} />
        ))}
      </section>
    </div>
  );
}

function GlobalSwitch() {
  const { t } = useI18n();
  const toast = useToast();
  const [on, setOn] = useState<boolean | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => void api<{ enabled: boolean }>(`${BASE}/config`).then((r) => setOn(r.enabled), setError), []);
  return (
    <section className="card" aria-label={t('apps.admin.global')}>
      <h2>{t('apps.admin.global')}</h2>
      {error ? (
        <p className="error" role="alert">
          {errorText(error, t)}
        </p>
      ) : null}
      {on !== null && (
        <label className="check">
          <input
            type="checkbox"
            checked={on}
            onChange={async (e) => {
              const next = e.target.checked;
              try {
                setOn((await api<{ enabled: boolean }>(`${BASE}/config`, { method: 'PATCH', body: { enabled: next } })).enabled);
                changed();
              } catch (err) {
                toast.error(err);
              }
            }}
          />{' '}
          {t('apps.admin.global_toggle')}
        </label>
      )}
    </section>
  );
}

function KeysCard() {
  const { t } = useI18n();
  const toast = useToast();
  const [keys, setKeys] = useState<KeyRow[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [publisher, setPublisher] = useState('');
  const [pem, setPem] = useState('');
  const [formError, setFormError] = useState<string | null>(null);
  const [removing, setRemoving] = useState<KeyRow | null>(null);
  const load = () => api<{ keys: KeyRow[] }>(`${BASE}/keys`).then((r) => setKeys(r.keys), setError);
  useEffect(() => void load(), []);
  return (
    <section className="card" aria-label={t('apps.admin.keys')}>
      <h2>{t('apps.admin.keys')}</h2>
      {error ? (
        <p className="error" role="alert">
          {errorText(error, t)}
        </p>
      ) : null}
      {keys?.length === 0 && <p className="muted">{t('apps.admin.keys_none')}</p>}
      {!!keys?.length && (
        <ul className="key-list">
          {keys.map((k) => (
            <li key={k.id} className="line">
              <strong>{k.publisher}</strong> <code className="muted">{k.public_key_pem.replace(/-----[^-]+-----|\s/g, '').slice(0, 24)}…</code>{' '}
              <button type="button" className="danger" aria-label={t('apps.admin.key_remove', { publisher: k.publisher })} onClick={() => setRemoving(k)}>
                {t('common.delete')}
              </button>
            </li>
          ))}
        </ul>
      )}
      <form
        className="form"
        onSubmit={async (e) => {
          e.preventDefault();
          setFormError(null);
          try {
            await api(`${BASE}/keys`, { body: { publisher: publisher.trim(), public_key_pem: pem.trim() } });
            toast.info(t('apps.admin.key_added', { publisher: publisher.trim() }));
            setPublisher('');
            setPem('');
            void load();
          } catch (err) {
            setFormError(refusalText(err, t));
          }
        }}
      >
        <label>
          {t('apps.admin.key_publisher')}
          <input value={publisher} required onChange={(e) => setPublisher(e.target.value)} />
        </label>
        <label>
          {t('apps.admin.key_pem')}
          <textarea rows={4} value={pem} required spellCheck={false} onChange={(e) => setPem(e.target.value)} />
        </label>
        {formError && (
          <p className="error" role="alert">
            {formError}
          </p>
        )}
        <div className="actions">
          <button type="submit" className="primary" disabled={!publisher.trim() || !pem.trim()}>
            {t('apps.admin.key_add')}
          </button>
        </div>
      </form>
      {removing && (
        <ConfirmDialog
          title={t('apps.admin.key_remove', { publisher: removing.publisher })}
          text={t('apps.admin.key_remove_confirm', { publisher: removing.publisher })}
          confirmLabel={t('common.delete')}
          danger
          onClose={() => setRemoving(null)}
          onConfirm={() => void api(`${BASE}/keys/${removing.id}`, { method: 'DELETE' }).then(load, toast.error)}
        />
      )}
    </section>
  );
}

function InstallCard({ onInstalled }: { onInstalled: (a: AppRow) => void }) {
  const { t } = useI18n();
  const toast = useToast();
  const [file, setFile] = useState<File | null>(null);
  const [hosts, setHosts] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [inputKey, setInputKey] = useState(0);
  return (
    <section className="card" aria-label={t('apps.admin.install')}>
      <h2>{t('apps.admin.install')}</h2>
      <form
        className="form"
        onSubmit={async (e) => {
          e.preventDefault();
          if (!file) return;
          setBusy(true);
          setError(null);
          try {
            const list = hosts.split(/[\s,]+/).filter(Boolean);
            const a = await sendPackage('POST', `${BASE}/apps${list.length ? `?approve_hosts=${encodeURIComponent(list.join(','))}` : ''}`, file);
            toast.info(t('apps.admin.installed_ok', { name: a.name, version: a.version }));
            onInstalled(a);
            changed();
            setFile(null);
            setHosts('');
            setInputKey((k) => k + 1);
          } catch (err) {
            setError(refusalText(err, t));
          } finally {
            setBusy(false);
          }
        }}
      >
        <label>
          {t('apps.admin.package')}
          <input key={inputKey} type="file" accept=".zip,application/zip" onChange={(e) => setFile(e.target.files?.[0] ?? null)} />
        </label>
        <label>
          {t('apps.admin.approve_hosts')}
          <input value={hosts} onChange={(e) => setHosts(e.target.value)} />
        </label>
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        <div className="actions">
          <button type="submit" className="primary" disabled={!file || busy}>
            {t('apps.admin.install_btn')}
          </button>
        </div>
      </form>
    </section>
  );
}

function AppCard({ app, onChange, onRemoved }: { app: AppRow; onChange: (a: AppRow) => void; onRemoved: () => void }) {
  const { t } = useI18n();
  const toast = useToast();
  const [hosts, setHosts] = useState<string[]>(app.approved_hosts);
  const [settings, setSettings] = useState(() => JSON.stringify(app.settings ?? {}, null, 2));
  const [settingsError, setSettingsError] = useState<string | null>(null);
  const [upgrade, setUpgrade] = useState<File | null>(null);
  const [upgradeError, setUpgradeError] = useState<string | null>(null);
  const [confirm, setConfirm] = useState(false);
  const [busy, setBusy] = useState(false);
  useEffect(() => setHosts(app.approved_hosts), [app.approved_hosts]);

  const patch = async (body: Partial<Pick<AppRow, 'enabled' | 'settings' | 'approved_hosts'>>) => {
    const a = await api<AppRow>(`${BASE}/apps/${encodeURIComponent(app.id)}`, { method: 'PATCH', body });
    onChange(a);
    changed();
    return a;
  };
  const saveSettings = async () => {
    setSettingsError(null);
    let parsed: unknown;
    try {
      parsed = JSON.parse(settings);
    } catch (e) {
      return setSettingsError(t('apps.admin.settings_bad', { reason: (e as Error).message }));
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return setSettingsError(t('apps.admin.settings_object'));
    try {
      await patch({ settings: parsed as Record<string, unknown> });
      toast.info(t('apps.admin.saved'));
    } catch (e) {
      setSettingsError(refusalText(e, t));
    }
  };
  const settingsId = `app-settings-${app.id}`;
  return (
    <article className="card app-card" aria-label={t('apps.admin.details', { name: app.name })} data-testid={`app-${app.id}`}>
      <h3>
        {app.name} <span className="muted">{app.version}</span>
      </h3>
      {app.description && <p>{app.description}</p>}
      <p className="muted">
        {t('apps.admin.publisher')}: {app.publisher} · <code title={app.digest}>{app.digest.slice(0, 12)}</code>
      </p>
      <label className="check">
        <input type="checkbox" checked={app.enabled} onChange={(e) => void patch({ enabled: e.target.checked }).catch(toast.error)} />{' '}
        {t('apps.admin.enabled_for', { name: app.name })}
      </label>
      <p>
        {t('apps.admin.permissions')}:{' '}
        {app.permissions.length
          ? app.permissions.map((p) => (
              <code key={p} className="chip">
                {p}
              </code>
            ))
          : t('apps.admin.permissions_none')}
      </p>
      <fieldset>
        <legend>{t('apps.admin.hosts')}</legend>
        {app.http_hosts.length === 0 ? (
          <p className="muted">{t('apps.admin.hosts_none')}</p>
        ) : (
          <>
            {app.http_hosts.map((h) => (
              <label key={h} className="check">
                <input
                  type="checkbox"
                  checked={hosts.includes(h)}
                  onChange={(e) => setHosts((l) => (e.target.checked ? [...l, h] : l.filter((x) => x !== h)))}
                />{' '}
                <code>{h}</code>
              </label>
            ))}
            <button type="button" onClick={() => void patch({ approved_hosts: hosts }).then(() => toast.info(t('apps.admin.saved')), toast.error)}>
              {t('apps.admin.hosts_save')}
            </button>
          </>
        )}
      </fieldset>
      <div className="app-field">
        <label htmlFor={settingsId}>{t('apps.admin.settings')}</label>
        <textarea
          id={settingsId}
          rows={5}
          spellCheck={false}
          className="mono"
          value={settings}
          aria-invalid={!!settingsError || undefined}
          aria-describedby={settingsError ? `${settingsId}-err` : undefined}
          onChange={(e) => setSettings(e.target.value)}
        />
        {settingsError && (
          <p className="error" id={`${settingsId}-err`} role="alert">
            {settingsError}
          </p>
        )}
        <div>
          <button type="button" onClick={() => void saveSettings()}>
            {t('apps.admin.settings_save')}
          </button>
        </div>
      </div>
      <div className="app-field">
        <label>
          {t('apps.admin.upgrade')}
          <input type="file" accept=".zip,application/zip" onChange={(e) => setUpgrade(e.target.files?.[0] ?? null)} />
        </label>
        {upgradeError && (
          <p className="error" role="alert">
            {upgradeError}
          </p>
        )}
        <div>
          <button
            type="button"
            disabled={!upgrade || busy}
            onClick={async () => {
              setBusy(true);
              setUpgradeError(null);
              try {
                const a = await sendPackage('PUT', `${BASE}/apps/${encodeURIComponent(app.id)}/package`, upgrade!);
                onChange(a);
                changed();
                toast.info(t('apps.admin.upgraded', { name: a.name, version: a.version }));
              } catch (e) {
                setUpgradeError(refusalText(e, t));
              } finally {
                setBusy(false);
              }
            }}
          >
            {t('apps.admin.upgrade_btn')}
          </button>
        </div>
      </div>
      <div className="actions">
        <button type="button" className="danger" onClick={() => setConfirm(true)}>
          {t('apps.admin.uninstall')}
        </button>
      </div>
      {confirm && (
        <ConfirmDialog
          title={t('apps.admin.uninstall')}
          text={t('apps.admin.uninstall_confirm', { name: app.name })}
          confirmLabel={t('apps.admin.uninstall')}
          danger
          onClose={() => setConfirm(false)}
          onConfirm={() =>
            void api(`${BASE}/apps/${encodeURIComponent(app.id)}`, { method: 'DELETE' }).then(() => {
              changed();
              onRemoved();
            }, toast.error)
          }
        />
      )}
    </article>
  );
}
