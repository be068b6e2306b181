/**
 * The app store (docs/app-store.md): connections to signed static stores, their
 * catalogue (kept 10 minutes, refreshed with a conditional GET), and installs,
 * upgrades and uninstalls of apps from it through the app plugins' own install
 * path. Every install or upgrade is an intent checked before anything is
 * downloaded (compatible version, not installed yet or older, no new permission
 * without the admin's yes); the download must match the index's size and
 * sha256, and the package's manifest the index entry, before the existing code
 * verifies its publisher signature. Refusals are `intent_*` / `store_*` with
 * `details.kind` and `details.reason`.
 */
import { createHash } from 'node:crypto';
import { actorRef, actorTenant, type Actor } from '../auth';
import { AppError, isAppError } from '../errors';
import type { EventBus } from '../events';
import { compareVersions, satisfies } from '../lib/versions';
import type { StoreConnection, StoreConnectionsRepo } from './connections.repo';
import { fetchStoreFile } from './fetch';
import { StoreMedia } from './media';
import type { StoreDrivers } from './driver-install';
import type { LanguagePackStore } from './language-packs';
import {
  fingerprint,
  INDEX_FILE,
  INDEX_MAX_BYTES,
  SIGNATURE_FILE,
  SIGNATURE_MAX_BYTES,
  storeError,
  verifyIndex,
  type StoreEntry,
  type StoreIndex,
  type StoreCategory,
  type StoreKind,
  type StoreVersion,
} from './format';

/** The default page of the catalogue. */
export const CATALOGUE_PAGE = 100;

export interface CatalogueQuery {
  q?: string;
  kind?: StoreKind;
  category?: StoreCategory;
  updates?: boolean;
  limit?: number;
  offset?: number;
}

/** A search word in the entry's id, name or one of its descriptions. */
const matches = (e: StoreEntry, q: string) =>
  e.id.includes(q) || e.name.toLowerCase().includes(q) || Object.values(e.description).some((d) => d.toLowerCase().includes(q));

/** Where the web UI reads a picture of store `store` (the media route). */
const mediaUrl = (store: number, file: string) => `/api/admin/app-store/stores/${store}/media?file=${encodeURIComponent(file)}`;

/** The spec's "catalogue kept 10 minutes". */
export const CATALOGUE_TTL_MS = 10 * 60_000;

/** What the store needs of the installed apps (the app plugins' admin side, wired in compose.ts). */
export interface StoreApps {
  /** Installed apps: id → version and the permissions their manifest holds. */
  installed(): Promise<Map<string, { version: string; permissions: string[] }>>;
  /** `expect` sees the verified manifest before anything is written; it throws to refuse. */
  install(by: Actor, bytes: Buffer, approveHosts: string[], expect: (m: PackageFacts) => void): Promise<unknown>;
  upgrade(by: Actor, id: string, bytes: Buffer, expect: (m: PackageFacts) => void): Promise<unknown>;
  uninstall(by: Actor, id: string): Promise<unknown>;
  /** Sets a licence token for an installed app (the admin's licence path): its status. */
  setLicense(by: Actor, id: string, token: string): Promise<{ status: string; valid_until?: string; updates_until?: string }>;
  /** Makes `source`'s licence revocations exactly `ids` (a store's list). */
  syncRevocations(by: Actor, source: string, ids: readonly string[]): Promise<{ added: number; lifted: number }>;
}
export interface PackageFacts {
  id: string;
  version: string;
  permissions: readonly string[];
}

export interface StoreDeps {
  repo: StoreConnectionsRepo;
  bus: EventBus;
  apps: StoreApps;
  packs: LanguagePackStore;
  /** Storage drivers installed from a store (driver-install.ts). */
  drivers: StoreDrivers;
  version: string;
  /** Why the store is off right now (`plugins_disabled`, `app_store_disabled`), or null. */
  off: () => 'plugins_disabled' | 'app_store_disabled' | null;
  /** Bound on each request to a store (a store that hangs). */
  timeoutMs: number;
  /** Overrides the 16 MiB index cap (tests). */
  indexMaxBytes?: number;
  /** Free bytes where an entry of this kind is kept (the plugin folder, the SQLite file's disk), or null when unknown. */
  freeBytes?: (kind: StoreKind) => Promise<number | null>;
}

/** Room an install needs beyond the package: unpacked and written, with a margin the rest of the service keeps. */
export const roomNeeded = (size: number) => 3 * size + 64 * 1024 * 1024;

export type StoreAction = 'install' | 'upgrade';
/** How an operation follows a download: the bytes so far of the package's size, and its cancel. */
export interface DownloadWatch {
  progress?: (done: number, total: number) => void;
  signal?: AbortSignal;
}

export interface InstallRequest {
  store: number;
  id: string;
  version?: string;
  approve_hosts?: string[];
  /** The admin's yes to permissions an upgrade adds. */
  approve_permissions?: boolean;
}

const intent = (
  code: 'intent_incompatible' | 'intent_installed' | 'intent_newer_installed' | 'intent_permission' | 'intent_unsupported' | 'intent_disk_full',
  reason: string,
  extra: Record<string, unknown>,
  kind = 'app',
) =>
  new AppError(
    code,
    { reason, ...Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v as string)])) },
    { kind, reason, ...extra },
  );

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** An entry's versions, highest first. */
const newestFirst = (e: StoreEntry) => [...e.versions].sort((a, b) => compareVersions(b.version, a.version));

export class AppStore {
  private cache = new Map<number, { at: number; etag: string | null; index: StoreIndex }>();
  /** The catalogue's pictures, read through the service (media.ts). */
  readonly media: StoreMedia;
  constructor(private d: StoreDeps) {
    this.media = new StoreMedia({ repo: d.repo, index: (c) => this.index(c), timeoutMs: d.timeoutMs });
  }

  /** Puts the installed language packs in memory (at start, before requests). */
  loadLanguages(): Promise<void> {
    return this.d.packs.load();
  }

  /** Installed language packs: id → version (and no permissions), as the update check compares them. */
  installedLanguages() {
    return this.d.packs.installed();
  }

  requireOn(): void {
    const why = this.d.off();
    if (why) throw new AppError(why);
  }

  private audit(by: Actor, action: string, resource: string, meta: Record<string, unknown>) {
    void this.d.bus.emit(actorTenant(by), 'audit', { action, actor: actorRef(by), request: by.request, resource, meta });
  }

  private async must(id: number): Promise<StoreConnection> {
    const c = await this.d.repo.get(id);
    if (!c) throw new AppError('not_found', { path: `store ${id}` });
    return c;
  }

  private view(c: StoreConnection) {
    const cached = this.cache.get(c.id);
    return {
      id: c.id,
      url: c.url,
      name: c.name,
      fingerprint: c.fingerprint,
      enabled: c.enabled,
      refreshed_at: c.refreshed_at,
      last_error: c.last_error,
      revocations_at: c.revocations_at,
      // The revocation list has gone unread for 30 days (docs/app-store.md, "Licences online").
      licences_unchecked: !!c.revocations_warned_at,
      entries: cached ? cached.index.entries.length : null,
      added_at: c.added_at,
    };
  }

  async list() {
    return { stores: (await this.d.repo.list()).map((c) => this.view(c)) };
  }

  /** Fetches index.json and its signature and verifies them (nothing cached, nothing recorded). */
  private async load(url: string, pem: string, etag: string | null) {
    const base = { timeoutMs: this.d.timeoutMs };
    const idx = await fetchStoreFile(new URL(INDEX_FILE, url).href, { ...base, maxBytes: this.d.indexMaxBytes ?? INDEX_MAX_BYTES, etag });
    if (idx.not_modified) return null;
    const sig = await fetchStoreFile(new URL(SIGNATURE_FILE, url).href, { ...base, maxBytes: SIGNATURE_MAX_BYTES });
    if (sig.not_modified) throw storeError('store_unreachable', 'http_status', { status: 304 });
    return { index: verifyIndex(idx.bytes, sig.bytes, pem), etag: idx.etag };
  }

  /** Adds a store after its index verified against the key the admin gave (the answer carries the key's fingerprint). */
  async connect(by: Actor, rawUrl: string, pem: string) {
    const url = storeUrl(rawUrl);
    const fp = fingerprint(pem);
    const loaded = (await this.load(url, pem, null))!;
    const id = await this.d.repo.add({ url, public_key_pem: pem, fingerprint: fp }, by.kind === 'system' ? null : by.principal.id);
    if (id === null) throw new AppError('conflict', { reason: `${url} is connected already` }, { reason: 'connected', url });
    await this.d.repo.refreshed(id, { name: loaded.index.name, etag: loaded.etag });
    this.cache.set(id, { at: Date.now(), etag: loaded.etag, index: loaded.index });
    this.audit(by, 'app_store.connect', `store:${id}`, { url, fingerprint: fp, name: loaded.index.name });
    return this.view((await this.d.repo.get(id))!);
  }

  async setEnabled(by: Actor, id: number, enabled: boolean) {
    if (!(await this.d.repo.setEnabled(id, enabled))) throw new AppError('not_found', { path: `store ${id}` });
    this.audit(by, 'admin.config_change', `store:${id}`, { enabled });
    return this.view(await this.must(id));
  }

  async disconnect(by: Actor, id: number) {
    const c = await this.must(id);
    await this.d.repo.remove(id);
    this.cache.delete(id);
    this.audit(by, 'app_store.disconnect', `store:${id}`, { url: c.url, fingerprint: c.fingerprint });
    return { ok: true };
  }

  /**
   * The store's verified index: the copy in memory while younger than 10 minutes (unless `force`), else a
   * conditional GET. A failed refresh is recorded on the connection and forgets the copy: what the store
   * serves now did not verify, so nothing is installed from it until it does.
   */
  async index(c: StoreConnection, force = false): Promise<StoreIndex> {
    const hit = this.cache.get(c.id);
    if (hit && !force && Date.now() - hit.at < CATALOGUE_TTL_MS) return hit.index;
    try {
      const loaded = await this.load(c.url, c.public_key_pem, hit?.etag ?? null);
      const next = loaded ? { at: Date.now(), ...loaded } : { ...hit!, at: Date.now() };
      this.cache.set(c.id, next);
      await this.d.repo.refreshed(c.id, { name: next.index.name, etag: next.etag });
      return next.index;
    } catch (e) {
      this.cache.delete(c.id);
      await this.d.repo.refreshed(c.id, { error: isAppError(e) ? `${e.code}: ${e.params.reason ?? ''}` : String(e) });
      throw e;
    }
  }

  async refresh(id: number) {
    const c = await this.must(id);
    await this.index(c, true);
    return this.view((await this.d.repo.get(id))!);
  }

  /**
   * One page of every enabled store's entries (filtered by `q` on id, name and description, and by `kind`),
   * each with the newest version that runs here, the installed one and whether it is newer; `total` counts
   * the filtered entries. `updates` keeps only entries with an update available.
   */
  async catalogue(o: CatalogueQuery = {}) {
    const installed = await this.d.apps.installed();
    const packs = this.d.packs.installed();
    const latestOf = (e: StoreEntry) => newestFirst(e).find((v) => satisfies(this.d.version, v.filedock_range));
    const drivers = this.d.drivers.installed();
    const mineOf = (e: StoreEntry) => ({ app: installed, 'language-pack': packs, storage: drivers })[e.kind].get(e.id)?.version;
    const newer = (mine: string | undefined, latest: StoreVersion | undefined) => !!(mine && latest && compareVersions(latest.version, mine) > 0);
    // Installed first: reading every version range of 10,000 entries for the few installed ones costs a browse its budget.
    const updatable = (e: StoreEntry) => {
      const mine = mineOf(e);
      return !!mine && newer(mine, latestOf(e));
    };
    const stores = [];
    const found: Array<{ store: number; e: StoreEntry }> = [];
    const q = o.q?.trim().toLowerCase();
    for (const c of (await this.d.repo.list()).filter((x) => x.enabled)) {
      let index: StoreIndex;
      try {
        index = await this.index(c);
      } catch (e) {
        stores.push({ ...this.view((await this.d.repo.get(c.id)) ?? c), error: isAppError(e) ? { error: e.code, details: e.details } : { error: 'internal' } });
        continue;
      }
      stores.push(this.view(c));
      for (const e of index.entries)
        if ((!o.kind || e.kind === o.kind) && (!o.category || e.categories?.includes(o.category)) && (!q || matches(e, q)) && (!o.updates || updatable(e)))
          found.push({ store: c.id, e });
    }
    const offset = o.offset ?? 0;
    // Only the page is presented: sorting versions and reading ranges for 10,000 entries is the cost of a browse.
    const entries = found.slice(offset, offset + (o.limit ?? CATALOGUE_PAGE)).map(({ store, e }) => {
      const versions = newestFirst(e);
      const latest = latestOf(e);
      const mine = mineOf(e);
      return {
        store,
        id: e.id,
        kind: e.kind,
        name: e.name,
        publisher: e.publisher,
        publisher_key: e.publisher_key ?? null,
        description: e.description,
        license: e.license,
        latest: latest
          ? {
              version: latest.version,
              size: latest.size,
              permissions: latest.permissions,
              ...(latest.completeness !== undefined && { completeness: latest.completeness }),
            }
          : null,
        versions: versions.map((v) => ({ version: v.version, compatible: satisfies(this.d.version, v.filedock_range), filedock_range: v.filedock_range })),
        installed_version: mine ?? null,
        update_available: newer(mine, latest),
        categories: e.categories ?? [],
        // Pictures through the service (media.ts): the browser never asks a store itself.
        icon: e.icon ? mediaUrl(store, e.icon.file) : null,
        screenshots: (e.screenshots ?? []).map((s) => ({ url: mediaUrl(store, s.file), caption: s.caption })),
      };
    });
    return { stores, total: found.length, entries };
  }

  /** The entry and version an install or upgrade asks for; refusals that need nothing downloaded. */
  private async pick(req: InstallRequest): Promise<{ c: StoreConnection; entry: StoreEntry; v: StoreVersion }> {
    const c = await this.must(req.store);
    if (!c.enabled) throw new AppError('conflict', { reason: `store ${c.id} is disabled` }, { reason: 'store_disabled', store: c.id });
    const index = await this.index(c);
    const entry =
      index.entries.find((e) => e.id === req.id) ??
      (() => {
        throw new AppError('not_found', { path: `${req.id} in store ${c.id}` });
      })();
    if (entry.kind === 'language-pack') this.d.packs.refuseBuiltIn(entry.id);
    const compatible = newestFirst(entry).filter((v) => satisfies(this.d.version, v.filedock_range));
    let v: StoreVersion | undefined;
    if (req.version) {
      v = entry.versions.find((x) => x.version === req.version);
      if (!v) throw new AppError('not_found', { path: `${req.id} ${req.version} in store ${c.id}` });
      if (!compatible.includes(v))
        throw intent(
          'intent_incompatible',
          'incompatible_version',
          {
            id: entry.id,
            version: v.version,
            filedock_range: v.filedock_range,
            running: this.d.version,
          },
          entry.kind,
        );
    } else {
      v = compatible[0];
      if (!v) throw intent('intent_incompatible', 'incompatible_version', { id: entry.id, running: this.d.version }, entry.kind);
    }
    return { c, entry, v };
  }

  /** Downloads the package the index names and checks it is the one the index describes (size, then sha256). */
  private async download(c: StoreConnection, v: StoreVersion, kind: StoreKind, watch: DownloadWatch = {}): Promise<Buffer> {
    const url = new URL(v.file, c.url).href;
    let bytes: Buffer;
    try {
      const { progress, signal } = watch;
      const r = await fetchStoreFile(url, { timeoutMs: this.d.timeoutMs, maxBytes: v.size, signal, onBytes: progress && ((done) => progress(done, v.size)) });
      bytes = (r as { bytes: Buffer }).bytes;
    } catch (e) {
      if (isAppError(e) && e.params.reason === 'too_large') throw storeError('store_sha_mismatch', 'size_mismatch', { file: v.file, size: v.size }, kind);
      throw e;
    }
    if (bytes.length !== v.size) throw storeError('store_sha_mismatch', 'size_mismatch', { file: v.file, size: v.size, got: bytes.length }, kind);
    const got = sha256(bytes);
    if (got !== v.sha256) throw storeError('store_sha_mismatch', 'sha_mismatch', { file: v.file, sha256: v.sha256, got }, kind);
    return bytes;
  }

  /** The verified package must be the index's entry: same id, version and permissions. */
  private expect(entry: StoreEntry, v: StoreVersion) {
    return (m: PackageFacts) => {
      const same = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x) => b.includes(x));
      if (m.id !== entry.id || m.version !== v.version || !same(m.permissions, v.permissions))
        throw storeError('store_invalid', 'index_mismatch', { file: v.file, id: m.id, version: m.version });
    };
  }

  /** Refuses an install the disk it lands on has no room for (`intent_disk_full`), before anything is downloaded. */
  private async room(entry: StoreEntry, v: StoreVersion) {
    const free = await this.d.freeBytes?.(entry.kind);
    const need = roomNeeded(v.size);
    if (free != null && free < need) throw intent('intent_disk_full', 'disk_full', { id: entry.id, version: v.version, need, free }, entry.kind);
  }

  /** What is installed of this entry's kind: apps, language packs or storage drivers. */
  private async installedOf(entry: StoreEntry) {
    if (entry.kind === 'storage') return this.d.drivers.installed().get(entry.id);
    return (entry.kind === 'language-pack' ? this.d.packs.installed() : await this.d.apps.installed()).get(entry.id);
  }

  /**
   * What an install or upgrade will do, refused now when it would be (nothing downloaded): the store, entry
   * and version, what is installed, the permissions an app's upgrade adds. An upgrade goes to a higher version
   * only; one that asks a permission the app did not hold needs `approve_permissions`.
   */
  async plan(action: StoreAction, req: InstallRequest) {
    const { c, entry, v } = await this.pick(req);
    const cur = await this.installedOf(entry);
    const facts = { id: entry.id, installed: cur?.version, version: v.version };
    if (action === 'upgrade' && !cur) throw new AppError('not_found', { path: entry.id });
    const order = cur ? compareVersions(cur.version, v.version) : -1;
    if (order > 0) throw intent('intent_newer_installed', 'newer_installed', facts, entry.kind);
    if (cur && (order === 0 || action === 'install')) throw intent('intent_installed', 'already_installed', facts, entry.kind);
    const added = cur && entry.kind === 'app' ? v.permissions.filter((p) => !(cur as { permissions: string[] }).permissions.includes(p)) : [];
    if (added.length && !req.approve_permissions)
      throw intent('intent_permission', 'permission_not_approved', { id: entry.id, version: v.version, permissions: added });
    await this.room(entry, v);
    return { c, entry, v, from: cur?.version ?? null, added };
  }

  /** Installs an entry (`progress` hears the download's bytes); refusals as `plan`. */
  install(by: Actor, req: InstallRequest, watch: DownloadWatch = {}) {
    return this.run(by, 'install', req, watch);
  }

  upgrade(by: Actor, req: InstallRequest, watch: DownloadWatch = {}) {
    return this.run(by, 'upgrade', req, watch);
  }

  private async run(by: Actor, action: StoreAction, req: InstallRequest, watch: DownloadWatch = {}) {
    const { c, entry, v, from, added } = await this.plan(action, req);
    const bytes = await this.download(c, v, entry.kind, watch);
    const was = from ?? undefined;
    if (entry.kind === 'language-pack') return this.d.packs.install(by, c.id, entry, v, v.sha256, bytes, was);
    if (entry.kind === 'storage') return this.d.drivers.install(by, c.id, entry, v, bytes, was);
    const app = from
      ? await this.d.apps.upgrade(by, entry.id, bytes, this.expect(entry, v))
      : await this.d.apps.install(by, bytes, req.approve_hosts ?? [], this.expect(entry, v));
    this.audit(by, 'app_store.install', `app:${entry.id}`, {
      store: c.id,
      ...(from && { from }),
      version: v.version,
      sha256: v.sha256,
      ...(added.length && { permissions_approved: added }),
    });
    return app;
  }

  /**
   * Removes an app through the app plugins' uninstall (audited there as `app_plugin.uninstall`); an id that
   * names no installed app but an installed language pack or storage driver removes that (a catalogue row's Uninstall).
   */
  async uninstall(by: Actor, id: string) {
    if (!(await this.d.apps.installed()).has(id) && this.d.packs.installed().has(id)) return this.d.packs.uninstall(by, id);
    if (!(await this.d.apps.installed()).has(id) && this.d.drivers.installed().has(id)) return this.d.drivers.uninstall(by, id);
    return this.d.apps.uninstall(by, id);
  }

  /** Removes an installed language pack; its readers fall back to English. */
  async uninstallLanguage(by: Actor, id: string) {
    return this.d.packs.uninstall(by, id);
  }
}

/** A store's base URL: http(s) only, no credentials, with a trailing slash so index.json resolves beside it. */
export function storeUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new AppError('validation_failed', { field: 'url', reason: 'not a URL' }, { field: 'url' });
  }
  if (!['http:', 'https:'].includes(u.protocol) || u.username || u.password)
    throw new AppError('validation_failed', { field: 'url', reason: 'an http(s) URL without credentials' }, { field: 'url' });
  u.hash = '';
  u.search = '';
  if (u.pathname.endsWith(`/${INDEX_FILE}`)) u.pathname = u.pathname.slice(0, -INDEX_FILE.length);
  if (!u.pathname.endsWith('/')) u.pathname += '/';
  return u.href;
}
