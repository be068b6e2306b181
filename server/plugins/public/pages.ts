/**
 * Public app pages (SPEC App plugins: "Public pages of apps are real shares
 * at /s/{token}", rules 1-3; docs/app-plugins.md, "Public app pages"). An app
 * opens a page for a person (`pages.create`): a share row of kind `app` made by
 * the shares module with all its machinery (expiry ceiling, PIN hash and lock,
 * revocation when the storage goes or the creator is disabled). A visitor
 * reads the link's state, passes the PIN, sends events to the app's view (the
 * page) and reads the exposed files. The app answers as it does for a person,
 * with `public: true`: its surface is sanitised, file paths become the refs of
 * the exposed files (a creator's path never reaches the visitor) and no `open`
 * survives; a job it asks for runs as the link's creator (rule 1), never as
 * the visitor. While a page's call runs, the app's host API is cut down to
 * reading the exposed files, its own key-value storage, its texts and its
 * approved hosts.
 */
import { decide, linkActor, personActor, type Actor, type Principal } from '../../auth';
import { AppError, isAppError, validation } from '../../errors';
import type { RequestMeta } from '../../events';
import type { FileService, OpenFile, Place } from '../../files';
import { statOrRevoked, type AppLinkFile, type OpenShare, type SharesService, type ShareRow, type ShareView } from '../../shares';
import { actionDefault, appFieldErrors, RUN_LIMITS, writes } from '../actions/service';
import type { HostDeps } from '../host/host-api';
import { buildHostApi } from '../host/host-api';
import { describe, type PluginJobs } from '../jobs';
import type { AppsRepo, InstalledApp } from '../registry/apps.repo';
import type { AppRuntime } from '../runtime';
import type { HostApi } from '../sandbox/sandbox';
import type { Operation } from '../../contract';
import type { Lang } from '../../lib/i18n';
import type { TenantScope } from '../../db';
import { uiPath } from '../../lib/paths';
import type { AppLicenses } from '../licenses';
import { formFields, sanitiseSurface, type Surface, type SurfaceNode } from '../surface/sanitise';
import { checkSubmission } from '../surface/validate';

const EVENTS = ['open', 'change', 'action', 'submit'] as const;
/** Host methods an app may use while it answers a visitor. */
const PUBLIC_HOST = new Set(['files.stat', 'files.read', 'kv.get', 'kv.set', 'kv.delete', 'kv.list', 'i18n.t', 'http.fetch']);
const bytesOf = (v: unknown) => Buffer.byteLength(JSON.stringify(v ?? null));

export interface PagesDeps {
  repo: AppsRepo;
  runtime: AppRuntime;
  files: FileService;
  jobs: PluginJobs;
  host: () => HostDeps;
  shares: SharesService;
  /** A held licence stops the app's pages too: events and files answer 403 `store_license`. */
  licenses: AppLicenses;
  off: () => 'plugins_disabled' | 'app_plugins_disabled' | null;
}

/** A page's job as its visitor follows it (`op`). */
export interface PageOp {
  job_id: string;
  status: Operation['status'];
  progress: number;
  message: string | null;
  outputs: Array<{ ref: string }>;
  output_count: number;
  error_code?: string | null;
  error_text?: string | null;
}

/** A visitor's credentials: a download token from the PIN route (cookie or `dt`), or the PIN itself. */
export interface PageCred {
  pin?: string;
  dt?: string;
}

/** `GET /api/public/s/{token}`. */
export interface PageState {
  token: string;
  kind: 'app';
  /** `active`, `expired`, `revoked` or `suspended`. */
  state: ShareView['state'];
  revoked: boolean;
  /** Why a link reads as revoked: `creator` (disabled or deleted), `storage`, `app_unavailable`, `gone` (a file). */
  reason?: string;
  expires_at: string | null;
  requires_pin: boolean;
  unlocked: boolean;
  /** While five wrong PINs hold the gate: when it opens again. */
  locked_until?: string;
  retry_after?: number;
  app?: { plugin: string; page: string; title: string | null; files: Array<{ ref: string; name: string; size: number; mime: string | null }> };
}

/** The form fields last shown per link and visitor address (submit checks), bounded and short-lived. */
class VisitorMemory {
  private m = new Map<string, { at: number; fields: Map<string, Record<string, unknown>> }>();
  set(k: string, fields: Map<string, Record<string, unknown>>) {
    this.m.delete(k);
    this.m.set(k, { at: Date.now(), fields });
    if (this.m.size > 5000) this.m.delete(this.m.keys().next().value!);
  }
  get(k: string) {
    const e = this.m.get(k);
    return e && Date.now() - e.at < 3_600_000 ? e.fields : new Map<string, Record<string, unknown>>();
  }
}

export class AppPages {
  private memory = new VisitorMemory();
  constructor(private d: PagesDeps) {}

  // ---- the app's side (host methods pages.create / pages.revoke) ----

  /** Opens a page of `app` for `actor` (host `pages.create`). */
  async create(app: InstalledApp, actor: Actor, a: Record<string, unknown>): Promise<{ token: string; url: string; share_id: number }> {
    const page = a.page;
    if (typeof page !== 'string' || !app.manifest.views.some((v) => v.id === page)) throw validation('page', 'a view id of the app');
    if (a.title !== undefined && (typeof a.title !== 'string' || a.title.length > 200)) throw validation('title', 'text of at most 200 characters');
    if (a.pin !== undefined && typeof a.pin !== 'string') throw validation('pin', 'text');
    if (a.expires_at !== undefined && typeof a.expires_at !== 'string') throw validation('expires_at', 'an RFC 3339 time');
    if (a.max_visits !== undefined && typeof a.max_visits !== 'number') throw validation('max_visits', 'a positive whole number');
    if (!Array.isArray(a.paths)) throw validation('paths', 'a list of paths');
    const v = await this.d.shares.createApp(
      actor,
      {
        plugin: app.id,
        page,
        title: a.title as string | undefined,
        paths: a.paths as string[],
        pin: a.pin as string | undefined,
        expires_at: a.expires_at as string | undefined,
        max_visits: a.max_visits as number | undefined,
      },
      '',
    );
    return { token: v.token, url: v.url, share_id: v.id };
  }

  /** Revokes a page this app opened (host `pages.revoke`): its creator or an admin; anything else is `not_found`. */
  async revoke(app: InstalledApp, actor: Actor, a: Record<string, unknown>): Promise<{ revoked: true; share_id: number }> {
    const key = a.share_id !== undefined ? String(a.share_id) : typeof a.token === 'string' ? a.token : '';
    const row = await this.d.shares.managed(actor, key);
    if (row.kind !== 'app' || row.plugin_name !== app.id) throw new AppError('not_found');
    const v = await this.d.shares.revoke(actor, String(row.id));
    return { revoked: true, share_id: v.id };
  }

  // ---- the visitor's side ----

  /** The installed, enabled app behind a link and its page, or null (the link then reads as revoked / unavailable). */
  private async appOf(share: ShareRow): Promise<InstalledApp | null> {
    // The link's tenant's app: a page is served only where its link is found, by its own tenant's app.
    return this.usable(share, share.plugin_name ? await this.d.repo.get(share, share.plugin_name) : null);
  }

  /** `app` when it can serve the link: installed, enabled and with the link's page; else null. */
  private usable(share: ShareRow, app: InstalledApp | null): InstalledApp | null {
    if (this.d.off()) return null;
    if (!app || !app.enabled || !app.manifest.views.some((v) => v.id === share.page_id)) return null;
    return app;
  }

  /** Whether a live app link still has its app (the HTML page route). */
  async available(share: ShareRow): Promise<boolean> {
    return (await this.appOf(share)) !== null;
  }

  /** `GET /api/public/s/{token}`: the state; once unlocked (or with no PIN) the app block. */
  async state(scope: TenantScope, token: string, cred: PageCred, request?: RequestMeta): Promise<PageState> {
    const { share, state, owner } = await this.d.shares.peek(scope, token, 'app');
    const base: PageState = {
      token,
      kind: 'app',
      state,
      revoked: state === 'revoked',
      expires_at: share?.expires_at ?? null,
      requires_pin: !!share?.pin_hash,
      unlocked: false,
    };
    if (!share) return { ...base, reason: 'storage' };
    if (state === 'revoked') return { ...base, reason: owner ? 'storage' : 'creator' };
    if (state !== 'active') return base;
    const lockedUntil = this.d.shares.pinLockedUntil(share);
    if (lockedUntil) Object.assign(base, { locked_until: lockedUntil, retry_after: Math.max(1, Math.ceil((Date.parse(lockedUntil) - Date.now()) / 1000)) });
    const app = await this.appOf(share);
    if (!app) return { ...base, state: 'revoked', revoked: true, reason: 'app_unavailable' };
    if (!this.d.shares.unlocked(share, cred.dt)) return base;
    const o = await this.d.shares.open(scope, token, 'app');
    const files = await Promise.all(
      this.d.shares.appFiles(share).map(async (f) => {
        const e = await this.fileActor(o, f, request).stat({ storage_id: share.storage_id, rel: f.rel }).catch(statOrRevoked);
        return { ref: f.ref, name: e.name, size: e.size, mime: e.mime ?? null };
      }),
    ).catch((e) => {
      if (isAppError(e) && e.code === 'revoked') return null;
      throw e;
    });
    if (!files) return { ...base, state: 'revoked', revoked: true, reason: 'gone' };
    return { ...base, unlocked: true, app: { plugin: app.id, page: share.page_id!, title: share.title, files } };
  }

  /** `POST /api/public/s/{token}/pin`: the PIN gate (401 `pin_wrong`, 429 `locked`); a download token for 30 minutes. */
  async pin(scope: TenantScope, token: string, pin: string): Promise<{ download_token: string; expires_at: string }> {
    const o = await this.d.shares.open(scope, token, 'app');
    return this.d.shares.verify(o.share, pin);
  }

  /** The file service as one exposed file's link sees it: the creator's rights, confined to that file. */
  private fileActor(o: OpenShare, f: AppLinkFile, request?: RequestMeta) {
    return this.d.files.forActor(linkActor(o.owner, { id: o.share.id, storage_id: o.share.storage_id, rel: f.rel }, request), 'refuse');
  }

  /**
   * The creator must still hold `need` on every exposed file, else 403 `no_access`. Their rights only: a
   * read-only storage or an app's lock is the job's to meet when it writes (its op then fails with that code).
   */
  private creatorReaches(creator: Actor, places: Place[], need: 'viewer' | 'editor') {
    const me = this.d.files.forActor(creator, 'refuse');
    for (const p of places) {
      try {
        me.target(p, need, need === 'editor' ? { ignoreReadOnly: true } : {});
      } catch {
        throw new AppError('no_access');
      }
    }
  }

  /**
   * Opens a link for a visitor's call: live (410 expired/revoked), PIN passed, its app there (409
   * `link_unavailable`) and running (403 `store_license` while its licence is held).
   */
  private async enter(scope: TenantScope, token: string, cred: PageCred) {
    const o = await this.d.shares.open(scope, token, 'app');
    await this.d.shares.checkPin(o.share, cred);
    const app = await this.appOf(o.share);
    if (!app) throw new AppError('link_unavailable');
    await this.d.licenses.require(app);
    const files = this.d.shares.appFiles(o.share);
    const places = files.map((f) => ({ storage_id: o.share.storage_id, rel: f.rel }));
    return { o, app, files, places };
  }

  /**
   * `POST /api/public/s/{token}/event`: an empty body opens the page (`view` export, counts a visit against
   * `max_visits`); otherwise the app's `event` export. 200 `{surface}`, or 202 `{accepted, job_id}` when the
   * app answers with a job, queued as the creator.
   */
  async event(
    scope: TenantScope,
    token: string,
    cred: PageCred,
    body: Record<string, unknown> | null,
    lang: string,
    visitor: { ip: string; request?: RequestMeta },
  ) {
    const { o, app, files, places } = await this.enter(scope, token, cred);
    const b = body && Object.keys(body).length ? body : { event: 'open' };
    if (!EVENTS.includes(b.event as never)) throw validation('event', `one of ${EVENTS.join(', ')}`);
    const data = b.data === undefined || b.data === null ? {} : b.data;
    if (typeof data !== 'object' || Array.isArray(data)) throw validation('data', 'an object');
    if (bytesOf(data) + bytesOf(b.state) > RUN_LIMITS.params_bytes)
      throw new AppError('payload_too_large', { max: RUN_LIMITS.params_bytes }, { field: 'data', max: RUN_LIMITS.params_bytes });
    if (b.action_id !== undefined && b.action_id !== null && (typeof b.action_id !== 'string' || b.action_id.length > 128))
      throw validation('action_id', 'a footer action id');
    // Rule 1: the creator acts, with their rights as they are now (never the visitor's).
    const creator = personActor(o.owner, visitor.request);
    this.creatorReaches(creator, places, 'viewer');
    const memKey = `${o.share.id}\u0000${visitor.ip}`;
    if (b.event === 'submit') checkSubmission(this.memory.get(memKey), data as Record<string, unknown>);
    if (b.event === 'open') await this.d.shares.claimDownload(o.share); // a visit, never given back
    const paths = await describe(this.d.files, creator, places).catch(statOrRevoked);
    const refOf = new Map(paths.map((p, i) => [p.path, files[i].ref]));
    const host = this.publicHost(app, creator, lang, new Set(refOf.keys()));
    const input = { view: o.share.page_id, paths, lang, settings: app.settings, public: true };
    const viaEvent = () => this.d.runtime.call(app, 'event', { ...input, state: b.state ?? null, event: b.event, action_id: b.action_id ?? null, data }, host);
    // Opening asks the `view` export; an app that has only `event` gets the `open` event there.
    const raw =
      b.event === 'open'
        ? await this.d.runtime.call(app, 'view', { ...input, section: null }, host).catch((e) => {
            if (isAppError(e) && e.code === 'app_failed' && e.params.reason === 'unknown_function') return viaEvent();
            throw e;
          })
        : await viaEvent();
    const r = raw as Record<string, unknown> | null;
    const answer = (r && typeof r === 'object' && !('nodes' in r) ? r : { surface: r }) as {
      surface?: unknown;
      job?: { action?: unknown; params?: unknown };
      errors?: unknown;
    };
    if (Array.isArray(answer.errors) && answer.errors.length) throw appFieldErrors(answer.errors);
    let surface: Surface | undefined;
    if (answer.surface !== undefined) {
      surface = publicSurface(sanitiseSurface(answer.surface), refOf);
      this.memory.set(memKey, formFields(surface));
    }
    if (answer.job) {
      const action = app.manifest.actions.find((x) => x.id === answer.job!.action);
      if (!action) throw new AppError('link_unavailable', { reason: 'action' }, { reason: 'action' });
      if (bytesOf(answer.job.params) > RUN_LIMITS.params_bytes)
        throw new AppError('payload_too_large', { max: RUN_LIMITS.params_bytes }, { field: 'params', max: RUN_LIMITS.params_bytes });
      if (!decide(o.owner, `app.${app.id}.${action.id}`, actionDefault(action))) throw new AppError('no_access');
      this.creatorReaches(creator, places, writes(action) ? 'editor' : 'viewer');
      const id = await this.d.jobs.enqueue(app, creator, action.id, places, answer.job.params ?? {}, lang, { page: o.share.id });
      return { status: 202, body: { accepted: true, job_id: id, ...(surface && { surface }) } };
    }
    return { status: 200, body: { surface: surface ?? sanitiseSurface(null) } };
  }

  /**
   * `GET /api/public/s/{token}/ops/{id}`: a job this page queued, as its visitor may follow it (the link live,
   * the PIN passed): status, progress, the app's message, the error in the visitor's language, and outputs
   * only as the refs of exposed files (a new file's path is the creator's). Any other op is 404.
   */
  async op(scope: TenantScope, token: string, cred: PageCred, id: string, lang: Lang): Promise<PageOp> {
    const o = await this.d.shares.open(scope, token, 'app');
    await this.d.shares.checkPin(o.share, cred);
    const op = await this.d.jobs.ofPage(o.share, id, lang);
    if (!op) throw new AppError('not_found');
    const me = this.d.files.forActor(personActor(o.owner), 'refuse');
    const refOf = new Map(
      this.d.shares.appFiles(o.share).flatMap((f) => {
        try {
          return [[uiPath(me.target({ storage_id: o.share.storage_id, rel: f.rel }).storage.name, f.rel), f.ref] as const];
        } catch {
          return []; // the creator lost the storage: no output is theirs to show
        }
      }),
    );
    const outputs = (op.outputs ?? []).flatMap((x) => (refOf.has(x.path) ? [{ ref: refOf.get(x.path)! }] : []));
    return {
      job_id: op.id,
      status: op.status,
      progress: op.progress,
      message: op.message,
      outputs,
      output_count: op.outputs?.length ?? 0,
      ...(op.status === 'failed' && { error_code: op.error_code, error_text: op.error_text }),
    };
  }

  /** `GET /api/public/s/{token}/file/{ref}`: one exposed file, opened through its own confined link actor. */
  async file(scope: TenantScope, token: string, cred: PageCred, ref: string, request?: RequestMeta): Promise<OpenFile> {
    const { o, files } = await this.enter(scope, token, cred);
    const f = files.find((x) => x.ref === ref);
    if (!f) throw new AppError('not_found');
    const place = { storage_id: o.share.storage_id, rel: f.rel };
    this.creatorReaches(personActor(o.owner, request), [place], 'viewer');
    return this.fileActor(o, f, request).open(place).catch(statOrRevoked);
  }

  /** The host API while an app answers a visitor: reading the exposed files only, no writes, jobs or locks. */
  private publicHost(app: InstalledApp, creator: Actor, lang: string, exposed: Set<string>): HostApi {
    const full = buildHostApi(this.d.host(), { app, actor: creator, lang });
    const out: HostApi = {};
    for (const [name, fn] of Object.entries(full)) {
      if (!PUBLIC_HOST.has(name)) continue;
      out[name] = name.startsWith('files.')
        ? (a) => {
            const p = (a as { path?: unknown } | null)?.path;
            if (typeof p !== 'string' || !exposed.has(p))
              throw new AppError(
                'app_host_refused',
                { plugin: app.id, reason: 'a public page reads only the files it exposes' },
                { reason: 'a public page reads only the files it exposes' },
              );
            return fn(a);
          }
        : fn;
    }
    for (const name of Object.keys(full)) {
      if (!out[name])
        out[name] = () => {
          throw new AppError(
            'app_host_refused',
            { plugin: app.id, reason: `${name} is not offered on a public page` },
            { reason: `${name} is not offered on a public page` },
          );
        };
    }
    return out;
  }

  // ---- the admin's list ----

  /** `GET /api/admin/app-plugins/shares`: app links with their creator, newest first. */
  async list(scope: TenantScope, q: { plugin?: string; active?: boolean; limit: number; offset: number }, origin: string) {
    const { rows, total } = await this.d.shares.repo.appLinks(scope, { ...q, nowIso: new Date().toISOString() });
    const apps = new Map((await this.d.repo.list(scope)).map((a) => [a.id, a]));
    // Each creator is read once for the page, however many of its links it lists.
    const ids = [...new Set(rows.map((r) => r.owner_id))];
    const creators = new Map<number, Principal | null>(
      await Promise.all(ids.map(async (owner_id) => [owner_id, await this.d.shares.ownerPrincipal({ ...scope, owner_id })] as const)),
    );
    const shares = await Promise.all(
      rows.map(async (row) => {
        const creator = creators.get(row.owner_id) ?? null;
        return {
          ...(await this.d.shares.present(row, origin, { owner: creator })),
          owner_id: row.owner_id,
          owner_email: creator?.email ?? null,
          app_available: this.usable(row, apps.get(row.plugin_name ?? '') ?? null) !== null,
          files: this.d.shares.appFiles(row).length,
        };
      }),
    );
    return { shares, total, limit: q.limit, offset: q.offset };
  }
}

/**
 * A surface as a visitor may see it: a node's `path` (list items, `preview`, `pdf-fields`) becomes the `ref`
 * of the exposed file it names; a path to anything else is removed (a `preview` or `pdf-fields` node
 * without one is dropped). No `open` instruction exists in a sanitised surface (rule 3).
 */
export function publicSurface(s: Surface, refOf: Map<string, string>): Surface {
  const walk = (nodes: SurfaceNode[]): SurfaceNode[] =>
    nodes.flatMap((n): SurfaceNode[] => {
      if (n.type === 'row') return [{ ...n, children: walk(n.children as SurfaceNode[]) }];
      if (n.type === 'preview' || n.type === 'pdf-fields') {
        const ref = refOf.get(String(n.path));
        return ref ? [{ ...n, path: ref }] : [];
      }
      if (n.type === 'list') {
        const items = (n.items as Array<Record<string, unknown>>).map((it) => {
          if (it.path === undefined) return it;
          const { path, ...rest } = it;
          const ref = refOf.get(String(path));
          return ref ? { ...rest, path: ref } : rest;
        });
        return [{ ...n, items }];
      }
      return [n];
    });
  return { ...s, nodes: walk(s.nodes) };
}
