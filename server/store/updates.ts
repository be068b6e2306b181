/**
 * Updates from the stores without a visit (docs/app-store.md, "Updates"): a
 * check, run daily and after a store refresh, compares the installed apps and
 * language packs with every enabled store (a pack has no permissions: only the
 * major-version rule holds it). A newer compatible version rings the bell once per app
 * version (`app_store.update_available`, claimed in the database so a second
 * check or instance stays silent), unless the admin let that app update itself
 * and the version neither crosses a major version nor asks for a permission the
 * installed one lacks: then the check upgrades it through the store's own
 * upgrade (same intents, same download checks) and audits it.
 */
import { DEFAULT_TENANT } from '../db';
import { actorRef, actorTenant, systemActor, type Actor } from '../auth';
import { AppError, isAppError } from '../errors';
import type { EventBus, EventMap } from '../events';
import { compareVersions, crossesMajor } from '../lib/versions';
import type { AppStore, StoreApps } from './service';
import type { StoreUpdatesRepo } from './updates.repo';

type Held = EventMap['app_store.update_available']['held'];

export interface UpdateReport {
  /** Installed apps with a newer compatible version before the check upgraded any. */
  available: number;
  upgraded: Array<{ id: string; from: string; version: string }>;
  notified: Array<{ id: string; version: string; held: Held }>;
}

export interface StoreUpdatesDeps {
  store: Pick<AppStore, 'catalogue' | 'upgrade' | 'requireOn' | 'installedLanguages'>;
  apps: Pick<StoreApps, 'installed'>;
  repo: StoreUpdatesRepo;
  bus: EventBus;
}

/** The catalogue's page size, its maximum: the updates of every installed app in a few pages. */
const PAGE = 1000;
/** What updates itself: apps and language packs (a storage driver's running processes keep the old program). */
const KINDS = ['app', 'language-pack'] as const;

export class StoreUpdates {
  private running: Promise<UpdateReport> | null = null;
  constructor(private d: StoreUpdatesDeps) {}

  /** Installed apps that update themselves. */
  async autoUpdating(): Promise<string[]> {
    return [...(await this.d.repo.autoUpdating())].sort();
  }

  /** Installed apps and language packs: id → version and permissions (a pack's are none). */
  private async installed() {
    return new Map([...this.d.store.installedLanguages(), ...(await this.d.apps.installed())]);
  }

  /** Turns automatic updates of an installed app or language pack on or off (audited). */
  async setAuto(by: Actor, id: string, enabled: boolean) {
    if (!(await this.installed()).has(id)) throw new AppError('not_found', { path: id });
    await this.d.repo.setAuto(id, enabled);
    this.audit(by, 'app_store.auto_update', id, { enabled });
    return { id, auto_update: enabled };
  }

  /** After an uninstall: a later install starts with automatic updates off and is notified afresh. */
  forget(id: string): Promise<void> {
    return this.d.repo.remove(id);
  }

  /** One check at a time: a check asked while one runs gets that one's report. Does nothing while the store is off. */
  check(): Promise<UpdateReport> {
    try {
      this.d.store.requireOn();
    } catch {
      return Promise.resolve({ available: 0, upgraded: [], notified: [] });
    }
    this.running ??= this.run().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private audit(by: Actor, action: string, app: string, meta: Record<string, unknown>) {
    void this.d.bus.emit(actorTenant(by), 'audit', { action, actor: actorRef(by), request: by.request, resource: `app:${app}`, meta });
  }

  /** The newest update of each installed app and language pack across the enabled stores (a store that fails offers none). */
  private async offers() {
    const best = new Map<string, { store: number; kind: (typeof KINDS)[number]; name: string; version: string; permissions: string[] }>();
    for (const kind of KINDS)
      for (let offset = 0; ; offset += PAGE) {
        const page = await this.d.store.catalogue({ kind, updates: true, limit: PAGE, offset });
        for (const e of page.entries) {
          const had = best.get(e.id);
          if (e.latest && (!had || compareVersions(e.latest.version, had.version) > 0))
            best.set(e.id, { store: e.store, kind, name: e.name, version: e.latest.version, permissions: e.latest.permissions });
        }
        if (offset + PAGE >= page.total) break;
      }
    return best;
  }

  private async run(): Promise<UpdateReport> {
    const offers = await this.offers();
    const installed = await this.installed();
    const auto = await this.d.repo.autoUpdating();
    const report: UpdateReport = { available: offers.size, upgraded: [], notified: [] };
    const by = systemActor('app_store.updates');
    for (const [id, o] of offers) {
      const cur = installed.get(id);
      if (!cur) continue;
      const added = o.permissions.filter((p) => !cur.permissions.includes(p));
      let held: Held | null = !auto.has(id) ? 'manual' : crossesMajor(cur.version, o.version) ? 'major' : added.length ? 'permissions' : null;
      let error: string | undefined;
      if (!held) {
        try {
          await this.d.store.upgrade(by, { store: o.store, id, version: o.version });
          this.audit(by, 'app_store.auto_upgrade', id, { store: o.store, from: cur.version, version: o.version });
          report.upgraded.push({ id, from: cur.version, version: o.version });
          continue;
        } catch (e) {
          held = 'failed';
          error = isAppError(e) ? `${e.code}${e.details?.reason ? `: ${String(e.details.reason)}` : ''}` : 'internal';
        }
      }
      if (!(await this.d.repo.claimNotice(id, o.version))) continue;
      await this.d.bus.emit(DEFAULT_TENANT, 'app_store.update_available', {
        app_id: id,
        ...(o.kind === 'language-pack' && { kind: o.kind }),
        name: o.name,
        store: o.store,
        installed: cur.version,
        version: o.version,
        held,
        ...(held === 'permissions' && { permissions: added }),
        ...(error && { error }),
      });
      report.notified.push({ id, version: o.version, held });
    }
    return report;
  }
}
