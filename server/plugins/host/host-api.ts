/**
 * The host API (docs/app-plugins.md, "Host API"): the only way out of an
 * app's sandbox, built per call for that call's caller. File calls go through
 * `files.forActor(actor)` (the caller's reach only, every write through the
 * write gate); each group needs its manifest permission; anything refused
 * reaches the app as an error with a code (`not_found`, `forbidden`,
 * `permission_denied`, `read_only`, `app_host_refused`, ...).
 */
import { Readable } from 'node:stream';
import { actorRef, decide, type Actor } from '../../auth';
import { AppError } from '../../errors';
import type { TenantScope } from '../../db';
import type { ActorFiles, FileService, Place } from '../../files';
import { format } from '../../lib/i18n';
import { uiPath } from '../../lib/paths';
import type { AppPermission } from '../package/manifest';
import type { AppsRepo, InstalledApp } from '../registry/apps.repo';
import type { HostApi } from '../sandbox/sandbox';
import type { AppHostRepo } from '../registry/host.repo';
import { appFetch, type FetchArgs } from './http-out';
import { withStagedWrites } from './staged-writes';
import { packText } from '../i18n';

export const HOST_LIMITS = {
  read_bytes: 512 * 1024,
  /** One write's bytes (the message cap is 1 MiB of JSON; base64 grows by a third). */
  write_bytes: 700 * 1024,
  list_entries: 1000,
  kv_key_chars: 128,
  kv_value_bytes: 64 * 1024,
  kv_keys: 10_000,
  kv_bytes: 16 * 1024 * 1024,
};

/** What a plugin job adds to its calls: progress, the outputs it wrote, more jobs. */
export interface JobScope {
  progress(fraction: number, bytes?: { done: number; total: number }, message?: string): void;
  outputs: string[];
  signal: AbortSignal;
}

/** A person as the people picker shows them (`GET /api/files/plugins/users`, host `users.get`). */
export interface PublicUser {
  id: number;
  username: string;
  email: string;
}

/**
 * The people look-up rule (the picker route and host `users.get`): the app declares `users.lookup` and the
 * caller holds `app.<app>.users.lookup` (default `user`), else 403 `permission_denied`.
 */
export function requireUserLookup(a: Actor, app: InstalledApp) {
  if (app.manifest.permissions.includes('users.lookup') && (a.kind === 'system' || decide(a.principal, `app.${app.id}.users.lookup`, 'user'))) return;
  const permission = `app.${app.id}.users.lookup`;
  throw new AppError('permission_denied', { permission, source: 'app' }, { permission, source: 'app' });
}

export interface HostDeps {
  files: FileService;
  /** One enabled account of the tenant by id, or null (`users.get`: the app's tenant's people only). */
  findUser: (s: TenantScope, id: number) => Promise<PublicUser | null>;
  repo: AppsRepo;
  /** `pages.create` / `pages.revoke` (host/pages.ts): public app pages. */
  pages?: (app: InstalledApp, actor: Actor) => HostApi;
  /** Lock tokens the host keeps for an app's own later writes (`locks.*`). */
  hostRepo: AppHostRepo;
  /** Queues a plugin-action job of this app as the same actor (`ops.create`). */
  enqueue(app: InstalledApp, actor: Actor, action: string, paths: string[], params: unknown, lang: string): Promise<string>;
}

export interface HostCall {
  app: InstalledApp;
  /**
   * The caller; null for a wake-up (`tick`): a read-only scope with no files at all (kv reads, i18n,
   * GET/HEAD to approved hosts).
   */
  actor: Actor | null;
  lang: string;
  job?: JobScope;
  /**
   * A scheduled job (no person: the system actor) reaches only these places, the files its wake-up
   * item named (each one this app had locked or marked): every path-taking method checks it.
   */
  reach?: Place[];
}

const obj = (v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const refuse = (plugin: string, reason: string) => new AppError('app_host_refused', { plugin, reason }, { reason });

export function buildHostApi(d: HostDeps, c: HostCall): HostApi {
  const { app } = c;
  const actor = c.actor;
  const me: ActorFiles | null = actor ? d.files.forActor(actor, 'refuse') : null;
  const needs = (p: AppPermission) => {
    if (!app.manifest.permissions.includes(p)) throw refuse(app.id, `the app did not declare the ${p} permission`);
  };
  /** The file service face of this call; a wake-up has none. */
  const files = (): ActorFiles =>
    me ??
    (() => {
      throw refuse(app.id, 'a wake-up (tick) has no files: it only reads its storage and plans jobs');
    })();
  const notWakeup = (what: string) => {
    if (!actor) throw refuse(app.id, `a wake-up (tick) is read-only: no ${what}`);
  };
  const reach = c.reach ? new Set(c.reach.map((p) => `${p.storage_id}:${p.rel}`)) : null;
  const path = (v: unknown) => {
    if (typeof v !== 'string' || !v.startsWith('/')) throw refuse(app.id, 'path must be a path such as /storage/folder/file');
    files();
    if (reach) {
      const t = me!.target(v);
      if (!reach.has(`${t.storage.id}:${t.rel}`)) throw refuse(app.id, 'a scheduled job reaches only the files its wake-up item named');
    }
    return v;
  };
  /** The caller's face, holding this app's own lock on `place` when it has one (its later writes pass). */
  const holder = async (place: Place): Promise<ActorFiles> => {
    const token = await d.hostRepo.tokenOf(app, place.storage_id, place.rel);
    return token ? files().holding(token) : files();
  };
  /** Resolves a path for a marks call: the place, checked at `need` through the holding face. */
  const marked = async (v: unknown, need: 'viewer' | 'editor') => {
    const p = path(v);
    const place = files().target(p).place;
    (await holder(place)).target(place, need);
    return { p, place };
  };
  const kvKey = (v: unknown) => {
    if (typeof v !== 'string' || v.length === 0 || v.length > HOST_LIMITS.kv_key_chars)
      throw refuse(app.id, `keys are 1 to ${HOST_LIMITS.kv_key_chars} characters`);
    return v;
  };
  const entry = (p: string, e: { name: string; type: string; size: number; mtime: number; mime?: string }) => ({
    path: p,
    name: e.name,
    type: e.type,
    size: e.size,
    modified: new Date(e.mtime).toISOString(),
    mime: e.mime ?? null,
  });

  const api: HostApi = {
    'files.stat': async (a) => {
      needs('files.read');
      const p = path(obj(a).path);
      return entry(p, await files().stat(p));
    },
    'files.list': async (a) => {
      needs('files.read');
      const p = path(obj(a).path);
      const max = Math.min(HOST_LIMITS.list_entries, Math.max(1, Number(obj(a).limit) || HOST_LIMITS.list_entries));
      const out = [];
      for await (const e of files().entries(p)) {
        out.push(entry(`${p.replace(/\/+$/, '')}/${e.name}`, e));
        if (out.length >= max) break;
      }
      return { entries: out };
    },
    'files.read': async (a) => {
      needs('files.read');
      const o = obj(a);
      const p = path(o.path);
      const st = await files().stat(p);
      if (st.type !== 'file') throw new AppError('not_found', { path: p });
      const start = Math.max(0, Math.floor(Number(o.offset) || 0));
      const length = Math.min(HOST_LIMITS.read_bytes, Math.max(0, Math.floor(Number(o.length) || HOST_LIMITS.read_bytes)));
      const end = Math.min(st.size, start + length);
      const chunks: Buffer[] = [];
      if (end > start) for await (const ch of await files().read(p, { start, end: end - 1 }, c.job?.signal)) chunks.push(ch as Buffer);
      const bytes = Buffer.concat(chunks);
      return { data: bytes.toString(o.encoding === 'base64' ? 'base64' : 'utf8'), size: st.size, eof: end >= st.size };
    },
    'files.write': async (a) => {
      needs('files.write');
      const o = obj(a);
      const p = path(o.path);
      if (typeof o.data !== 'string') throw refuse(app.id, 'data must be a string (utf8 text, or base64 with encoding: "base64")');
      const bytes = Buffer.from(o.data, o.encoding === 'base64' ? 'base64' : 'utf8');
      if (bytes.length > HOST_LIMITS.write_bytes) throw refuse(app.id, `one write holds at most ${HOST_LIMITS.write_bytes} bytes`);
      const node = await (await holder(files().target(p).place)).write(p, Readable.from([bytes]), {
        size: bytes.length,
        origin: 'app',
        overwrite: o.overwrite === true,
        signal: c.job?.signal,
        audit: 'file.upload',
        meta: { plugin: app.id },
      });
      const written = uiPath(node.storageName, node.path);
      c.job?.outputs.push(written);
      return { path: written, size: bytes.length };
    },
    'kv.get': async (a) => {
      needs('storage');
      const v = await d.repo.kvGet(app, kvKey(obj(a).key));
      return v === null ? null : JSON.parse(v);
    },
    'kv.set': async (a) => {
      needs('storage');
      notWakeup('storage writes');
      const o = obj(a);
      const key = kvKey(o.key);
      const text = JSON.stringify(o.value ?? null);
      if (Buffer.byteLength(text) > HOST_LIMITS.kv_value_bytes) throw refuse(app.id, `a value holds at most ${HOST_LIMITS.kv_value_bytes} bytes of JSON`);
      if (!(await d.repo.kvSet(app, key, text, { keys: HOST_LIMITS.kv_keys, bytes: HOST_LIMITS.kv_bytes }))) throw refuse(app.id, "the app's storage is full");
      return true;
    },
    'kv.delete': async (a) => {
      needs('storage');
      notWakeup('storage writes');
      return await d.repo.kvDelete(app, kvKey(obj(a).key));
    },
    'kv.list': async (a) => {
      needs('storage');
      const prefix = typeof obj(a).prefix === 'string' ? (obj(a).prefix as string).slice(0, HOST_LIMITS.kv_key_chars) : '';
      return { keys: await d.repo.kvKeys(app, prefix, 1000) };
    },
    'ops.progress': (a) => {
      if (!c.job) throw refuse(app.id, 'progress is for job calls');
      const o = obj(a);
      const bytes = Number.isFinite(o.bytes_done) && Number.isFinite(o.bytes_total) ? { done: Number(o.bytes_done), total: Number(o.bytes_total) } : undefined;
      c.job.progress(Math.max(0, Math.min(1, Number(o.fraction) || 0)), bytes, typeof o.message === 'string' ? o.message.slice(0, 500) : undefined);
      return true;
    },
    'ops.create': async (a) => {
      needs('ops');
      notWakeup('jobs (answer scheduled items instead)');
      const o = obj(a);
      const paths = Array.isArray(o.paths) ? o.paths.map(path) : [];
      return { op_id: await d.enqueue(app, actor!, String(o.action ?? ''), paths, o.params ?? {}, c.lang) };
    },
    'http.fetch': async (a) => {
      needs('http');
      const allowed = app.manifest.http_hosts.filter((h) => app.approved_hosts.includes(h));
      const method = String(obj(a).method ?? 'GET').toUpperCase();
      if (!actor && method !== 'GET' && method !== 'HEAD') throw refuse(app.id, 'a wake-up (tick) is read-only: GET and HEAD only');
      return appFetch(app.id, allowed, obj(a) as FetchArgs, c.job?.signal);
    },
    'users.get': (a) => {
      needs('users.lookup');
      notWakeup('people look-ups');
      requireUserLookup(actor!, app);
      // The people picker hands the app ids as text: both forms are taken.
      const raw = obj(a).id;
      const id = typeof raw === 'string' && /^\d{1,15}$/.test(raw) ? Number(raw) : raw;
      if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1) throw refuse(app.id, 'id must be a user id (a positive whole number)');
      return d.findUser(app, id);
    },
    'i18n.t': (a) => {
      const o = obj(a);
      return format(packText(app, String(o.key ?? ''), c.lang) ?? String(o.key ?? ''), obj(o.params));
    },
    // Locks and app state (docs/app-plugins.md, "Host API: locks and state"). The lock's plugin is always this app.
    'locks.set': async (a) => {
      needs('locks');
      notWakeup('locks');
      const o = obj(a);
      const { place } = await marked(o.path, 'editor');
      const str = (v: unknown) => (v === undefined || v === null ? null : v);
      const { token, lock } = await d.files.locks.set(
        place.storage_id,
        place.rel,
        {
          plugin: app.id,
          label: typeof o.label === 'string' && o.label.trim() ? o.label : app.manifest.name,
          reason: str(o.reason) as string | null,
          reason_text: str(o.reason_text) as string | null,
          until: str(o.until) as string | null,
        },
        actorRef(actor!),
      );
      await d.hostRepo.putToken(app, place.storage_id, place.rel, token);
      return { lock };
    },
    'locks.clear': async (a) => {
      needs('locks');
      notWakeup('locks');
      const { place } = await marked(obj(a).path, 'editor');
      const cleared = await d.files.locks.clear(place.storage_id, place.rel, app.id);
      await d.hostRepo.dropToken(app, place.storage_id, place.rel);
      return { cleared };
    },
    'locks.get': async (a) => {
      needs('locks');
      const { place } = await marked(obj(a).path, 'viewer');
      return { lock: d.files.locks.of(place.storage_id, place.rel) };
    },
    'state.set': async (a) => {
      needs('state');
      notWakeup('app state changes');
      const o = obj(a);
      if (typeof o.on !== 'boolean') throw refuse(app.id, 'on must be true or false');
      const { place } = await marked(o.path, 'editor');
      return { items: await d.files.appState.set(place.storage_id, place.rel, app.id, o.key as string, o.on) };
    },
    'state.get': async (a) => {
      needs('state');
      const { place } = await marked(obj(a).path, 'viewer');
      return { items: await d.files.appState.of(place.storage_id, place.rel) };
    },
    // Public pages need a person to be their creator: a wake-up (no actor) has none.
    ...(d.pages && actor ? d.pages(app, actor) : {}),
  };
  // Larger files in parts (`more: true`); a wake-up (no actor) writes nothing.
  if (me) api['files.write'] = withStagedWrites(api['files.write'], { hold: (p) => holder(me.target(p).place), app, job: c.job });
  return api;
}
