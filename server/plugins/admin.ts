/**
 * App administration (session-only admin routes, docs/app-plugins.md): install
 * from a signed package, upgrade (the version must increase), uninstall,
 * enable/disable, settings and approved hosts, and the trusted publisher
 * keys. Apps are the tenant's (docs/tenants.md, "Step 1: apps"): every
 * method works on the apps of the caller's tenant (`actorTenant`), so the
 * same id in another tenant is another app; the publisher keys are the
 * installation's. Every change is audited; a changed app's sandbox is
 * stopped so its next call runs the new code.
 */
import type { Actor } from '../auth';
import { actorRef, actorTenant } from '../auth';
import type { TenantScope } from '../db';
import { AppError, validation } from '../errors';
import type { EventBus } from '../events';
import { readAppPackage, requireEd25519Pem } from './package/package';
import type { Manifest } from './package/manifest';
import { compareVersions } from '../lib/versions';
import type { AppRef, AppsRepo, InstalledApp } from './registry/apps.repo';
import type { AppRuntime } from './runtime';

/** What the admin list shows of an app (never its code); `license` is its licence answer when known. */
export function appView(a: InstalledApp, license?: { status: string; valid_until?: string; updates_until?: string }) {
  const m = a.manifest;
  return {
    ...(license && { license, license_required: !!m.license?.required, license_store: m.license?.store ?? null }),
    id: a.id,
    name: m.name,
    version: a.version,
    publisher: a.publisher,
    description: m.description ?? '',
    digest: a.digest,
    enabled: a.enabled,
    permissions: m.permissions,
    http_hosts: m.http_hosts,
    approved_hosts: a.approved_hosts,
    settings: a.settings,
    actions: m.actions.map((x) => x.id),
    views: m.views.map((x) => x.id),
    languages: Object.keys(a.languages),
    installed_by: a.installed_by,
    installed_at: a.installed_at,
    updated_at: a.updated_at,
  };
}

export interface AdminDeps {
  repo: AppsRepo;
  runtime: AppRuntime;
  bus: EventBus;
  version: string;
  /** Lets go of the file locks an app set through the host (uninstall): a removed app must not hold files. */
  releaseLocks: (app: AppRef) => Promise<number>;
  /** The app's licence answer (licenses.ts), shown in the view. */
  licenseOf?: (app: InstalledApp) => Promise<{ status: string; valid_until?: string; updates_until?: string }>;
}

const SETTINGS_MAX_BYTES = 64 * 1024;

/** An upgrade or change that lost to another one (the app's version moved, or it was removed, after it was read). */
const changedMeanwhile = (id: string) => new AppError('conflict', { reason: `${id} changed meanwhile: read it again` }, { reason: 'changed', id });

export class AppAdmin {
  constructor(private d: AdminDeps) {}

  private async view(a: InstalledApp) {
    return appView(a, await this.d.licenseOf?.(a));
  }

  private audit(by: Actor, action: string, resource: string, meta: Record<string, unknown> = {}) {
    void this.d.bus.emit(actorTenant(by), 'audit', { action, actor: actorRef(by), request: by.request, resource: `app:${resource}`, meta });
  }

  /** The tenant's app `id`; another tenant's or none: `not_found`. */
  private async must(s: TenantScope, id: string): Promise<InstalledApp> {
    return (
      (await this.d.repo.get(s, id)) ??
      (() => {
        throw new AppError('not_found', { path: id });
      })()
    );
  }

  private async verify(bytes: Buffer) {
    return readAppPackage(bytes, { trusted: await this.d.repo.trustedKeys(), version: this.d.version });
  }

  async list(s: TenantScope) {
    return { apps: await Promise.all((await this.d.repo.list(s)).map((a) => this.view(a))) };
  }

  async get(s: TenantScope, id: string) {
    return this.view(await this.must(s, id));
  }

  /**
   * A new app; one already installed is `conflict` (upgrade it instead). Hosts are approved only from the manifest's list.
   * `expect` sees the verified manifest before anything is written (the app store checks it is the entry it chose).
   */
  async install(by: Actor, bytes: Buffer, approveHosts: string[], expect?: (m: Manifest) => void) {
    const pkg = await this.verify(bytes);
    expect?.(pkg.manifest);
    const app = await this.d.repo.install(
      actorTenant(by),
      pkg,
      by.kind === 'system' ? null : by.principal.id,
      pkg.manifest.http_hosts.filter((h) => approveHosts.includes(h)),
    );
    if (!app) throw new AppError('conflict', { reason: `${pkg.manifest.id} is installed: upgrade it` }, { reason: 'installed', id: pkg.manifest.id });
    this.audit(by, 'app_plugin.install', app.id, { version: app.version, publisher: app.publisher, digest: app.digest });
    return this.view(app);
  }

  /** Replaces an installed app's package by a higher version of the same app; approvals of hosts it still declares are kept. */
  async upgrade(by: Actor, id: string, bytes: Buffer, expect?: (m: Manifest) => void) {
    const s = actorTenant(by);
    const cur = await this.must(s, id);
    const pkg = await this.verify(bytes);
    expect?.(pkg.manifest);
    if (pkg.manifest.id !== id) throw validation('id', `the package is ${pkg.manifest.id}, not ${id}`);
    if (!(compareVersions(pkg.manifest.version, cur.version) > 0))
      throw validation('version', `${pkg.manifest.version} is not higher than the installed ${cur.version}`);
    await this.coveredByLicense(cur, pkg.manifest);
    const app = await this.d.repo.upgrade(
      s,
      pkg,
      cur.version,
      pkg.manifest.http_hosts.filter((h) => cur.approved_hosts.includes(h)),
    );
    if (!app) throw changedMeanwhile(id);
    await this.d.runtime.stop(app);
    this.audit(by, 'app_plugin.upgrade', id, { from: cur.version, to: app.version, digest: app.digest });
    return this.view(app);
  }

  /**
   * A paid app's licence with `updates_until` covers versions released until then (docs/app-plugins.md,
   * "Licences"): a later package is refused (403 `store_updates`), and so is one without a `released` day.
   */
  private async coveredByLicense(cur: InstalledApp, m: Manifest) {
    const until = m.license?.required ? (await this.d.licenseOf?.(cur))?.updates_until : undefined;
    if (!until) return;
    if (!m.released) throw validation('released', `the licence covers updates released until ${until}: the package must say when it was released`);
    if (Date.parse(`${m.released}T00:00:00Z`) > Date.parse(until)) {
      throw new AppError(
        'store_updates',
        { plugin: cur.id, updates_until: until, released: m.released },
        { kind: 'app', reason: 'updates_until', plugin: cur.id, updates_until: until, released: m.released },
      );
    }
  }

  async uninstall(by: Actor, id: string) {
    const cur = await this.must(actorTenant(by), id);
    await this.d.runtime.stop(cur);
    const released = await this.d.releaseLocks(cur);
    await this.d.repo.remove(cur);
    this.audit(by, 'app_plugin.uninstall', id, { version: cur.version, locks_released: released });
    return { ok: true };
  }

  async patch(by: Actor, id: string, p: { enabled?: boolean; settings?: Record<string, unknown>; approved_hosts?: string[] }) {
    const s = actorTenant(by);
    const cur = await this.must(s, id);
    if (p.settings !== undefined && Buffer.byteLength(JSON.stringify(p.settings)) > SETTINGS_MAX_BYTES)
      throw validation('settings', `at most ${SETTINGS_MAX_BYTES} bytes of JSON`);
    const unknown = p.approved_hosts?.find((h) => !cur.manifest.http_hosts.includes(h));
    if (unknown) throw validation('approved_hosts', `${unknown} is not declared by the app`);
    if (!(await this.d.repo.update(cur, cur.version, p))) throw changedMeanwhile(id);
    if (p.enabled === false) await this.d.runtime.stop(cur);
    this.audit(by, 'app_plugin.update', id, {
      ...(p.enabled !== undefined && { enabled: p.enabled }),
      ...(p.settings && { settings: 'changed' }),
      ...(p.approved_hosts && { approved_hosts: p.approved_hosts }),
    });
    return this.view(await this.must(s, id));
  }

  async keys() {
    return { keys: await this.d.repo.trustedKeys() };
  }

  async addKey(by: Actor, publisher: string, pem: string) {
    requireEd25519Pem(pem);
    const id = await this.d.repo.addKey({ publisher, public_key_pem: pem }, by.kind === 'system' ? null : by.principal.id);
    this.audit(by, 'app_plugin.key_add', publisher, { key_id: id });
    return { id, publisher };
  }

  async removeKey(by: Actor, id: number) {
    if (!(await this.d.repo.removeKey(id))) throw new AppError('not_found');
    this.audit(by, 'app_plugin.key_remove', String(id));
    return { ok: true };
  }
}
