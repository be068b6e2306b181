/**
 * Licences of installed apps (docs/app-plugins.md, "Licences"): the admin's
 * token per app, trusted store keys and revocations, and the status every app
 * door checks before it runs an app. A held licence (anything but `free`,
 * `valid`, `grace`) stops the app without removing it: its actions and views
 * leave `GET /actions`, runs and views answer 403 `store_license`, its jobs
 * fail, its wake-up does not run. The first check that finds an app held is
 * audited (`app_plugin.license_held`), the first that finds it running again
 * too (`app_plugin.license_released`).
 */
import { actorRef, actorTenant, type Actor } from '../auth';
import type { TenantScope } from '../db';
import { AppError, validation } from '../errors';
import { requireEd25519Pem } from './package/package';
import type { EventBus } from '../events';
import { decodeLicense, LICENSE_MAX_CHARS, licenseStatus, RUNNING, type LicenseAnswer } from './license';
import type { AppRef, AppsRepo, InstalledApp } from './registry/apps.repo';
import type { AppHostRepo } from './registry/host.repo';

/** How long a computed status is reused (the seat count reads every account). */
const CACHE_MS = 60_000;

export interface LicensesDeps {
  repo: AppsRepo;
  hostRepo: AppHostRepo;
  bus: EventBus;
  /** Enabled people allowed to use at least one of the app's actions or views. */
  allowedUsers: (app: InstalledApp) => Promise<number>;
}

export class AppLicenses {
  private cache = new Map<string, { at: number; digest: string; answer: LicenseAnswer }>();
  /** Held statuses already audited for apps with no licence row (`missing`), in this process. */
  private seenMissing = new Set<string>();
  constructor(private d: LicensesDeps) {}

  /** An audit row in `s`: an app's tenant for what concerns the app, the actor's for the installation's keys and revocations. */
  private audit(s: TenantScope, by: Actor | null, action: string, resource: string, meta: Record<string, unknown> = {}) {
    void this.d.bus.emit(s, 'audit', {
      action,
      actor: by ? actorRef(by) : null,
      request: by?.request,
      resource: `app:${resource}`,
      meta,
    });
  }

  /** The caches' key of an app: the same id in two tenants is two apps. */
  private static key = (app: AppRef) => `${app.tenant_id}:${app.id}`;

  /** Forgets computed statuses (a licence, key or revocation changed). */
  invalidate() {
    this.cache.clear();
  }

  async status(app: InstalledApp): Promise<LicenseAnswer> {
    const hit = this.cache.get(AppLicenses.key(app));
    if (hit && hit.digest === app.digest && Date.now() - hit.at < CACHE_MS) return hit.answer;
    // licenseStatus asks for keys of the manifest's store only, and about the token's own licence id only.
    const f = await this.d.hostRepo.licenseFacts(app, app.manifest.license?.store ?? null, (token) => decodeLicense(token)?.payload.id ?? null);
    // Seats are counted only for a licence token (licenseStatus asks only then): it reads every account.
    const users = f.row?.token ? await this.d.allowedUsers(app) : 0;
    const answer = licenseStatus(app, {
      token: f.row?.token ?? null,
      storeKeys: () => f.storeKeys,
      revoked: () => f.revoked,
      users: () => users,
    });
    this.cache.set(AppLicenses.key(app), { at: Date.now(), digest: app.digest, answer });
    await this.note(app, f.row?.held_status ?? null, !!f.row, answer);
    return answer;
  }

  /** Audits a change between running and held (once each way: of two checks seeing it, the one that moves the row). */
  private async note(app: InstalledApp, lastHeld: string | null, hasRow: boolean, a: LicenseAnswer) {
    const held = !RUNNING.includes(a.status);
    const key = AppLicenses.key(app);
    if (!hasRow) {
      if (held && !this.seenMissing.has(key)) this.audit(app, null, 'app_plugin.license_held', app.id, { status: a.status });
      if (held) this.seenMissing.add(key);
      else this.seenMissing.delete(key);
      return;
    }
    if (held && lastHeld !== a.status) {
      if (await this.d.hostRepo.moveHeldStatus(app, lastHeld, a.status)) this.audit(app, null, 'app_plugin.license_held', app.id, { status: a.status });
    } else if (!held && lastHeld !== null) {
      if (await this.d.hostRepo.moveHeldStatus(app, lastHeld, null)) this.audit(app, null, 'app_plugin.license_released', app.id, { status: a.status });
    }
  }

  async running(app: InstalledApp): Promise<boolean> {
    return RUNNING.includes((await this.status(app)).status);
  }

  /** Throws 403 `store_license` (details: kind `app`, reason = the status) when the app is held. */
  async require(app: InstalledApp): Promise<void> {
    const { status } = await this.status(app);
    if (!RUNNING.includes(status)) throw new AppError('store_license', { plugin: app.id, reason: status }, { kind: 'app', reason: status, plugin: app.id });
  }

  // Admin.
  async set(by: Actor, app: InstalledApp, token: string) {
    if (typeof token !== 'string' || token.length > LICENSE_MAX_CHARS) throw validation('token', `a licence token of at most ${LICENSE_MAX_CHARS} characters`);
    const decoded = decodeLicense(token);
    await this.d.hostRepo.setLicense(app, token.trim(), by.kind === 'system' ? null : by.principal.id);
    this.invalidate();
    this.seenMissing.delete(AppLicenses.key(app));
    this.audit(
      app,
      by,
      'app_plugin.license_set',
      app.id,
      decoded ? { license_id: decoded.payload.id, store: decoded.payload.store, licensee: decoded.payload.licensee } : { readable: false },
    );
    return this.status(app);
  }

  async remove(by: Actor, app: InstalledApp) {
    if (!(await this.d.hostRepo.removeLicense(app))) throw new AppError('not_found', { path: `${app.id}/license` });
    this.invalidate();
    this.audit(app, by, 'app_plugin.license_remove', app.id);
    return this.status(app);
  }

  async storeKeys() {
    return { keys: await this.d.hostRepo.storeKeys() };
  }

  async addStoreKey(by: Actor, store: string, pem: string) {
    requireEd25519Pem(pem);
    const id = await this.d.hostRepo.addStoreKey(store, pem, by.kind === 'system' ? null : by.principal.id);
    this.invalidate();
    this.audit(actorTenant(by), by, 'app_store.trust', store, { key_id: id });
    return { id, store };
  }

  async removeStoreKey(by: Actor, id: number) {
    if (!(await this.d.hostRepo.removeStoreKey(id))) throw new AppError('not_found');
    this.invalidate();
    this.audit(actorTenant(by), by, 'app_store.untrust', String(id));
    return { ok: true };
  }

  async revocations() {
    return { revocations: await this.d.hostRepo.revocations() };
  }

  async revoke(by: Actor, id: string, note: string | null) {
    await this.d.hostRepo.revoke(id, note, by.kind === 'system' ? null : by.principal.id);
    this.invalidate();
    this.audit(actorTenant(by), by, 'app_plugin.license_revoke', id, note ? { note } : {});
    return { ok: true };
  }

  /** A store's revocation list read again (`source` `store:<id>`; docs/app-store.md, "Licences online"). */
  async syncStoreRevocations(by: Actor, source: string, ids: readonly string[]) {
    const r = await this.d.hostRepo.syncRevocations(source, ids);
    if (r.added + r.lifted === 0) return r;
    this.invalidate();
    void this.d.bus.emit(actorTenant(by), 'audit', { action: 'app_plugin.license_revocations', actor: actorRef(by), resource: source, meta: r });
    return r;
  }

  async unrevoke(by: Actor, id: string) {
    if (!(await this.d.hostRepo.unrevoke(id))) throw new AppError('not_found');
    this.invalidate();
    this.audit(actorTenant(by), by, 'app_plugin.license_unrevoke', id);
    return { ok: true };
  }
}
