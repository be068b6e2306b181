/**
 * Admin → Tenants (multi-tenant mode, the platform operator only; docs/ui.md): every tenant with its host
 * names and status; create one with its first admin, suspend and resume it, delete a suspended one, and edit
 * its name, host names, quotas and the branding of its public pages (name, colour, logo).
 */
import { useCallback, useEffect, useState } from 'react';
import type { TenantView } from '../../../server/contract';
import { useI18n } from '../i18n';
import { Dialog } from '../ui/dialog';
import { ConfirmDialog, FormFooter } from '../ui/forms';
import { errorText, useToast } from '../ui/toast';
import { useSubmit } from '../ui/use-submit';
import { ActionsTableHead } from '../ui/table-head';
import * as api from './tenants-api';
import { QUOTA_KINDS, quotaLine } from './quota-line';

/** The installation's own tenant: never suspended nor deleted. */
const OWN = 1;
const QUOTAS = ['bytes', 'files', 'people', 'links', 'egress_share'] as const;

export function TenantsTab() {
  const { t } = useI18n();
  const toast = useToast();
  const [rows, setRows] = useState<TenantView[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [editing, setEditing] = useState<TenantView | 'new' | null>(null);
  const [removing, setRemoving] = useState<TenantView | null>(null);
  const load = useCallback(() => void api.tenants().then(setRows, setError), []);
  useEffect(load, [load]);

  const setStatus = (x: TenantView, status: TenantView['status']) => api.changeTenant(x.id, { status }).then(load, toast.error);
  const remove = (x: TenantView) =>
    api.deleteTenant(x.id).then(() => {
      toast.info(t('tenants.deleted', { name: x.name }));
      load();
    }, toast.error);

  return (
    <div className="settings tenants">
      {error ? (
        <p className="error" role="alert">
          {errorText(error, t)}
        </p>
      ) : null}
      <section className="card" aria-labelledby="tenants-title">
        <h2 id="tenants-title">{t('tenants.title')}</h2>
        <p className="hint">{t('tenants.intro')}</p>
        {rows &&
          (rows.length === 0 ? (
            <p className="muted">{t('tenants.none')}</p>
          ) : (
            <div className="table-wrap">
              <table className="table" data-testid="tenants">
                <ActionsTableHead columns={[t('tenants.slug'), t('tenants.name'), t('tenants.hostnames'), t('tenants.status'), t('status.quotas')]} />
                <tbody>
                  {rows.map((x) => (
                    <tr key={x.id}>
                      <td>{x.slug}</td>
                      <td>{x.name}</td>
                      <td>{x.hostnames.join(', ')}</td>
                      <td>{t(x.status === 'active' ? 'tenants.status.active' : 'tenants.status.suspended')}</td>
                      <td data-testid="tenant-usage">
                        <Usage x={x} />
                      </td>
                      <td>
                        <div className="row-actions">
                          <button type="button" className="small" onClick={() => setEditing(x)} aria-label={t('tenants.edit', { name: x.name })}>
                            {t('common.edit')}
                          </button>
                          {x.id !== OWN && (
                            <button type="button" className="small" onClick={() => void setStatus(x, x.status === 'active' ? 'suspended' : 'active')}>
                              {t(x.status === 'active' ? 'tenants.suspend' : 'tenants.resume')}
                            </button>
                          )}
                          {x.id !== OWN && (
                            <button
                              type="button"
                              className="small danger"
                              disabled={x.status !== 'suspended'}
                              title={x.status !== 'suspended' ? t('tenants.delete_hint') : undefined}
                              onClick={() => setRemoving(x)}
                            >
                              {t('common.delete')}
                            </button>
                          )}
                        </div>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ))}
        <div className="actions">
          <button type="button" className="primary" onClick={() => setEditing('new')}>
            {t('tenants.new')}
          </button>
        </div>
      </section>
      {editing === 'new' && <NewTenantDialog onSaved={load} onClose={() => setEditing(null)} />}
      {editing && editing !== 'new' && <EditTenantDialog tenant={editing} onSaved={load} onClose={() => setEditing(null)} />}
      {removing && (
        <ConfirmDialog
          title={t('common.delete')}
          text={t('tenants.confirm_delete', { name: removing.name })}
          confirmLabel={t('common.delete')}
          danger
          onConfirm={() => void remove(removing)}
          onClose={() => setRemoving(null)}
        />
      )}
    </div>
  );
}

function NewTenantDialog({ onSaved, onClose }: { onSaved: () => void; onClose: () => void }) {
  const { t } = useI18n();
  const toast = useToast();
  const [f, setF] = useState({ slug: '', name: '', hosts: '', email: '', password: '' });
  const field = (k: keyof typeof f) => ({ value: f[k], onChange: (e: { target: { value: string } }) => setF({ ...f, [k]: e.target.value }) });
  const { submit, busy, error } = useSubmit(async () => {
    const { tenant } = await api.createTenant({
      slug: f.slug.trim(),
      name: f.name.trim(),
      hostnames: api.hostList(f.hosts),
      admin: { email: f.email.trim(), password: f.password },
    });
    toast.info(t('tenants.created', { name: tenant.name }));
    onSaved();
    onClose();
  });
  return (
    <Dialog title={t('tenants.new')} onClose={onClose} wide>
      <form className="form" onSubmit={submit}>
        <label>
          {t('tenants.slug')}
          <input data-autofocus required maxLength={63} pattern="[a-z0-9](?:[a-z0-9\-]{0,61}[a-z0-9])?" {...field('slug')} />
          <small className="hint">{t('tenants.slug_hint')}</small>
        </label>
        <label>
          {t('tenants.name')}
          <input required maxLength={100} {...field('name')} />
        </label>
        <label>
          {t('tenants.hostnames')}
          <input {...field('hosts')} />
          <small className="hint">{t('tenants.hostnames_hint')}</small>
        </label>
        <label>
          {t('tenants.admin_email')}
          <input type="email" required autoComplete="off" {...field('email')} />
        </label>
        <label>
          {t('tenants.admin_password')}
          <input type="password" required autoComplete="new-password" {...field('password')} />
        </label>
        <FormFooter error={error} disabled={busy} submitLabel={t('common.create')} onCancel={onClose} />
      </form>
    </Dialog>
  );
}

function EditTenantDialog({ tenant, onSaved, onClose }: { tenant: TenantView; onSaved: () => void; onClose: () => void }) {
  const { t } = useI18n();
  const [name, setName] = useState(tenant.name);
  const [hosts, setHosts] = useState(tenant.hostnames.join(', '));
  const [quotas, setQuotas] = useState<Record<string, string>>(Object.fromEntries(QUOTAS.map((q) => [q, String(tenant.quotas[q] ?? '')])));
  const [brandName, setBrandName] = useState(tenant.branding.name ?? '');
  const [colour, setColour] = useState(tenant.branding.colour ?? '');
  const [logo, setLogo] = useState<File | null>(null);
  const [dropLogo, setDropLogo] = useState(false);
  const { submit, busy, error } = useSubmit(async () => {
    const q = Object.fromEntries(QUOTAS.filter((k) => quotas[k].trim() !== '').map((k) => [k, Number(quotas[k])]));
    await api.changeTenant(tenant.id, {
      name: name.trim(),
      hostnames: api.hostList(hosts),
      quotas: q,
      branding: { ...(brandName.trim() && { name: brandName.trim() }), ...(colour.trim() && { colour: colour.trim() }) },
    });
    if (logo) await api.uploadLogo(tenant.id, logo);
    else if (dropLogo) await api.removeLogo(tenant.id);
    onSaved();
    onClose();
  });
  return (
    <Dialog title={t('tenants.edit', { name: tenant.name })} onClose={onClose} wide>
      <form className="form" onSubmit={submit}>
        <label>
          {t('tenants.name')}
          <input data-autofocus required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <label>
          {t('tenants.hostnames')}
          <input value={hosts} onChange={(e) => setHosts(e.target.value)} />
          <small className="hint">{t('tenants.hostnames_hint')}</small>
        </label>
        <fieldset>
          <legend>{t('tenants.quotas')}</legend>
          {QUOTAS.map((k) => (
            <label key={k}>
              {t(`tenants.quota.${k}`)}
              <input
                type="number"
                min={0}
                max={k === 'egress_share' ? 100 : undefined}
                step={1}
                value={quotas[k]}
                onChange={(e) => setQuotas({ ...quotas, [k]: e.target.value })}
              />
            </label>
          ))}
        </fieldset>
        <fieldset>
          <legend>{t('tenants.branding')}</legend>
          <label>
            {t('tenants.brand_name')}
            <input maxLength={100} value={brandName} onChange={(e) => setBrandName(e.target.value)} />
          </label>
          <label>
            {t('tenants.brand_colour')}
            <input pattern="#[0-9a-fA-F]{6}" placeholder="#2457d6" value={colour} onChange={(e) => setColour(e.target.value)} />
          </label>
          {tenant.branding.logo && (
            <p>
              {t('tenants.logo_current')} <img className="tenant-logo" src={`/t/${tenant.slug}/api/public/branding/logo?v=${tenant.branding.logo}`} alt="" />
            </p>
          )}
          <label>
            {t('tenants.logo')}
            <input type="file" accept="image/png,image/jpeg,image/webp" onChange={(e) => setLogo(e.target.files?.[0] ?? null)} />
          </label>
          {tenant.branding.logo && (
            <label className="check">
              <input type="checkbox" checked={dropLogo} onChange={(e) => setDropLogo(e.target.checked)} /> {t('tenants.logo_remove')}
            </label>
          )}
        </fieldset>
        <FormFooter error={error} disabled={busy} submitLabel={t('common.save')} onCancel={onClose} />
      </form>
    </Dialog>
  );
}

/** What a tenant uses of each quota, one line each ("no limit" where it has none: 0 or unset). */
function Usage({ x }: { x: TenantView }) {
  const { t } = useI18n();
  const usage = x.usage;
  if (!usage) return null;
  return (
    <>
      {QUOTA_KINDS.map((k) => (
        <div key={k}>{quotaLine(t, k, usage[k], x.quotas[k])}</div>
      ))}
    </>
  );
}
