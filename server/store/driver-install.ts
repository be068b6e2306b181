/**
 * Storage drivers installed from a store (docs/app-store.md, "Storage drivers"):
 * the package the index describes (size and sha256 already checked by the store)
 * is verified against the publisher keys the admin trusts, unpacked into
 * `<data dir>/plugins/<id>/` (where discovery finds it at the next start),
 * probed there (handshake and ping, docs/plugin-driver-protocol.md) and
 * registered live as `plugin:<id>`. A driver that does not answer is refused and
 * leaves nothing behind; an upgrade that does not answer puts the old one back.
 * A `.store.json` beside the program marks what the store installed (plugins an
 * admin copied in by hand are not the store's to upgrade or remove).
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { actorRef, actorTenant, type Actor } from '../auth';
import { AppError, isAppError } from '../errors';
import type { EventBus } from '../events';
import type { TrustedKey } from '../plugins/package/package';
import { DRIVER_MANIFEST, DRIVER_PROGRAM, readDriverPackage } from './driver-package';
import { storeError, type StoreEntry, type StoreVersion } from './format';

const MARK = '.store.json';

/**
 * The storage side, wired by the composition root (only it and the file service reach drivers): the plugin
 * loader and the DriverRegistry that Admin → Storages → Add reads.
 */
export interface PluginDrivers {
  /** Starts `program`, checks its handshake and pings it (then stops it); throws when it does not answer. */
  probe(program: string): Promise<{ driver: string; register(): void }>;
  has(driver: string): boolean;
  remove(driver: string): void;
}

export interface StoreDriversDeps {
  /** `<data dir>/plugins`, the folder `discoverPlugins` reads at start. */
  dir: string;
  plugins: PluginDrivers;
  bus: EventBus;
  /** The publisher keys the admin trusts (Admin → Apps → Publisher keys). */
  trusted: () => Promise<TrustedKey[]>;
  /** Names of the storages configured with `driver`. */
  usedBy: (driver: string) => string[];
}

export class StoreDrivers {
  constructor(private d: StoreDriversDeps) {}

  /** Drivers the store installed: id → version (the store's intents compare versions with it). */
  installed(): Map<string, { version: string; permissions: string[] }> {
    const out = new Map<string, { version: string; permissions: string[] }>();
    let names: string[] = [];
    try {
      names = readdirSync(this.d.dir);
    } catch {
      return out;
    }
    for (const n of names.filter((x) => !x.startsWith('.'))) {
      try {
        out.set(n, { version: JSON.parse(readFileSync(join(this.d.dir, n, MARK), 'utf8')).version, permissions: [] });
      } catch {
        // not installed by the store (or no folder)
      }
    }
    return out;
  }

  /** Installs (or, with `from`, upgrades) the verified bytes of `entry` at `v`. */
  async install(by: Actor, store: number, entry: StoreEntry, v: StoreVersion, bytes: Buffer, from?: string) {
    const { manifest, program } = await readDriverPackage(bytes, await this.d.trusted());
    if (manifest.id !== entry.id || manifest.version !== v.version)
      throw storeError('store_invalid', 'index_mismatch', { file: v.file, id: manifest.id, version: manifest.version }, 'storage');
    const driver = `plugin:${entry.id}`;
    const final = join(this.d.dir, entry.id);
    // A plugin of that name put there by hand is not the store's to replace.
    if (!from && (this.d.plugins.has(driver) || existsSync(final)))
      throw new AppError(
        'intent_installed',
        { reason: 'already_installed', id: entry.id, installed: '(a plugin added by hand)' },
        { kind: 'storage', reason: 'already_installed', id: entry.id },
      );
    // Hidden names: discovery skips them, so a crash half-way leaves nothing that loads.
    const stage = join(this.d.dir, `.~fd-${entry.id}-${randomUUID()}`);
    const old = `${stage}-old`;
    await mkdir(stage, { recursive: true });
    await writeFile(join(stage, DRIVER_PROGRAM), program);
    await writeFile(join(stage, DRIVER_MANIFEST), JSON.stringify(manifest, null, 2));
    await writeFile(join(stage, MARK), JSON.stringify({ store, version: v.version, sha256: v.sha256, installed_at: new Date().toISOString() }));
    if (from) await rename(final, old);
    await rename(stage, final);
    let probed: Awaited<ReturnType<PluginDrivers['probe']>>;
    try {
      probed = await this.d.plugins.probe(join(final, DRIVER_PROGRAM));
      if (probed.driver !== driver) throw storeError('store_invalid', 'index_mismatch', { file: v.file, id: probed.driver.slice('plugin:'.length) }, 'storage');
    } catch (e) {
      await rm(final, { recursive: true, force: true });
      if (from) await rename(old, final);
      if (isAppError(e) && e.code.startsWith('store_')) throw e;
      const detail = isAppError(e) ? `${e.code}: ${e.params.reason ?? e.message}` : String(e);
      throw storeError('store_invalid', 'driver_refused', { file: v.file, detail: detail.slice(0, 500) }, 'storage');
    }
    if (from) await rm(old, { recursive: true, force: true });
    this.d.plugins.remove(driver);
    probed.register();
    this.audit(by, 'app_store.install', entry.id, { store, version: v.version, sha256: v.sha256, ...(from && { from }) });
    return { id: entry.id, kind: 'storage', name: manifest.name, version: v.version, driver };
  }

  /** Removes a driver the store installed; refused while a storage uses it. */
  async uninstall(by: Actor, id: string) {
    if (!this.installed().has(id)) throw new AppError('not_found', { path: `storage driver ${id}` });
    const driver = `plugin:${id}`;
    const storages = this.d.usedBy(driver);
    if (storages.length)
      throw new AppError(
        'intent_in_use',
        { reason: 'driver_in_use', id, storages: storages.join(', ') },
        { kind: 'storage', reason: 'driver_in_use', id, storages },
      );
    this.d.plugins.remove(driver);
    await rm(join(this.d.dir, id), { recursive: true, force: true });
    this.audit(by, 'app_store.uninstall', id, {});
    return { ok: true };
  }

  private audit(by: Actor, action: string, id: string, meta: Record<string, unknown>) {
    void this.d.bus.emit(actorTenant(by), 'audit', {
      action,
      actor: actorRef(by),
      request: by.request,
      resource: `driver:${id}`,
      meta: { kind: 'storage', ...meta },
    });
  }
}
