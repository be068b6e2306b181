/**
 * The user side of apps (SPEC App plugins, routes under /api/files/plugins):
 * the actions and views a person may use, running an action (a job, or the
 * opening surface of its view), views and their events, the people picker and
 * the licence status. Permissions are the app permissions `app.<app>.<id>`
 * (an action's or view's id), decided in the spec's order with the app's
 * default taken from the action's `min_role` (viewer → viewer, editor → user,
 * admin → admin; unset: `user` for an action that writes, else `viewer`) or
 * `viewer` for a view.
 */
import { mimeOf } from '../../lib/mime';
import { actorTenant, decide, type Actor, type Role } from '../../auth';
import type { TenantScope } from '../../db';
import { AppError, isAppError, validation } from '../../errors';
import type { FileService, Place } from '../../files';
import type { AppliesRule, ManifestAction, ManifestView } from '../package/manifest';
import type { AppsRepo, InstalledApp } from '../registry/apps.repo';
import type { AppRuntime } from '../runtime';
import { buildHostApi, requireUserLookup, type HostDeps, type PublicUser } from '../host/host-api';
import { describe, type PluginJobs } from '../jobs';
import { labelMap } from '../i18n';
import { misfit, type SelectedItem } from './applies';
import { formFields, sanitiseSurface, type Surface } from '../surface/sanitise';
import { checkSubmission } from '../surface/validate';
import { SurfaceMemory } from './surface-memory';
import type { AppLicenses } from '../licenses';
import type { PermissionSubject } from '../../auth';

/** SPEC Limits: an action run names at most 500 paths; params hold at most 64 KiB. */
export const RUN_LIMITS = { paths: 500, params_bytes: 64 * 1024 };
const EVENTS = ['open', 'change', 'action', 'submit'] as const;

export interface ActionsDeps {
  repo: AppsRepo;
  runtime: AppRuntime;
  files: FileService;
  jobs: PluginJobs;
  host: () => HostDeps;
  /** The `app_state` items of an item (`<plugin>:<key>`), as the catalogue holds them. */
  stateOf: (place: Place) => Promise<string[]>;
  /** `plugins_disabled` / `app_plugins_disabled` when the feature is off, else null. */
  off: () => 'plugins_disabled' | 'app_plugins_disabled' | null;
  /** The app's licence status (`licenses.ts`); a held app is stopped. */
  licenses: AppLicenses;
  /** Enabled people of the tenant matching `q` (the people picker: the app's tenant's). */
  findUsers: (s: TenantScope, q: string, limit: number) => Promise<PublicUser[]>;
}

const ROLE_DEFAULT: Record<string, Role> = { viewer: 'viewer', editor: 'user', admin: 'admin' };
/** Whether an action writes (its default role and the level it needs on the selection). */
export const writes = (a: ManifestAction) => !a.read_only_ok && (a.output_mode === 'new_file' || a.output_mode === 'replace');
/** The app's declared default for an action's permission (SPEC Authentication 7, step 5). */
export const actionDefault = (a: ManifestAction): Role => (a.min_role ? ROLE_DEFAULT[a.min_role] : writes(a) ? 'user' : 'viewer');
/** Whether a person may use at least one action or view of the app (a licence's seat count). */
export const mayUseApp = (s: PermissionSubject, app: InstalledApp): boolean =>
  app.manifest.actions.some((a) => decide(s, `app.${app.id}.${a.id}`, actionDefault(a))) ||
  app.manifest.views.some((v) => decide(s, `app.${app.id}.${v.id}`, 'viewer'));
const bytesOf = (v: unknown) => Buffer.byteLength(JSON.stringify(v ?? null));

export class AppActions {
  private memory = new SurfaceMemory();
  constructor(private d: ActionsDeps) {}

  private gate() {
    const off = this.d.off();
    if (off) throw new AppError(off);
  }

  /** The caller's tenant's enabled, running app `id` (another tenant's of the same id is not found). */
  private async app(actor: Actor, id: string): Promise<InstalledApp> {
    this.gate();
    const app = await this.d.repo.get(actorTenant(actor), id);
    if (!app || !app.enabled) throw new AppError('not_found', { path: id });
    await this.d.licenses.require(app);
    return app;
  }

  private may(a: Actor, app: InstalledApp, id: string, def: Role): boolean {
    return a.kind === 'system' || decide(a.principal, `app.${app.id}.${id}`, def);
  }

  private require(a: Actor, app: InstalledApp, id: string, def: Role) {
    if (this.may(a, app, id, def)) return;
    const permission = `app.${app.id}.${id}`;
    throw new AppError('permission_denied', { permission, source: 'app' }, { permission, source: 'app' });
  }

  /**
   * Whether `actor` may change `place` when it is locked, for the app holding the lock through the host
   * (its own action on a file it locked: the job writes with the kept token): that app's id, else null.
   */
  private async lockHolder(actor: Actor, place: Place): Promise<string | null> {
    const lock = this.d.files.locks.of(place.storage_id, place.rel);
    // The place is in the actor's tenant, so the app that locked it is that tenant's.
    const token = lock && (await this.d.host().hostRepo.tokenOf({ tenant_id: actorTenant(actor).tenant_id, id: lock.plugin }, place.storage_id, place.rel));
    if (!lock || !token) return null;
    try {
      this.d.files.forActor(actor, 'refuse').holding(token).target(place, 'editor');
      return lock.plugin;
    } catch {
      return null;
    }
  }

  /**
   * Resolves the selection for `actor`: every path reachable (404/403), all on one storage (400) and,
   * when the caller will write for `app`, writable (409 `read_only`, 403, 423 `locked` unless `app` holds
   * the lock); each item with what the rule looks at (`lockedBy`: the app that may still write it).
   */
  private async resolve(actor: Actor, paths: unknown, needWrite: boolean, app?: InstalledApp): Promise<{ places: Place[]; items: SelectedItem[] }> {
    if (!Array.isArray(paths) || paths.some((p) => typeof p !== 'string')) throw validation('paths', 'a list of paths');
    if (paths.length > RUN_LIMITS.paths) throw new AppError('too_many_paths', { max: RUN_LIMITS.paths }, { max: RUN_LIMITS.paths });
    const me = this.d.files.forActor(actor, 'refuse');
    const targets = [];
    for (const p of paths as string[]) {
      const t = me.target(p);
      if (needWrite) {
        try {
          me.target(t.place, 'editor');
        } catch (e) {
          if (!(isAppError(e) && e.code === 'locked' && app && (await this.lockHolder(actor, t.place)) === app.id)) throw e;
        }
      }
      targets.push(t);
    }
    if (new Set(targets.map((t) => t.storage.id)).size > 1) throw validation('paths', 'all paths must be on one storage');
    const items: SelectedItem[] = await Promise.all(
      targets.map(async (t) => {
        const e = await me.stat(t.place);
        let writable = true;
        let lockedBy: string | null = null;
        try {
          me.target(t.place, 'editor');
        } catch (err) {
          writable = false;
          if (isAppError(err) && err.code === 'locked') lockedBy = await this.lockHolder(actor, t.place);
        }
        return {
          type: e.type === 'dir' ? 'dir' : 'file',
          name: e.name || t.rel,
          mime: e.mime ?? mimeOf(e.name),
          state: await this.d.stateOf(t.place),
          writable,
          lockedBy,
        };
      }),
    );
    // For the app holding a lock, its file stays writable (the applies rule's `writable`).
    return { places: targets.map((t) => t.place), items: items.map((i) => (app && i.lockedBy === app.id ? { ...i, writable: true } : i)) };
  }

  /** The selection resolved and fitting the rule (422 `not_applicable` with the reason otherwise). */
  private async select(actor: Actor, app: InstalledApp, paths: unknown, rule: AppliesRule | undefined, needWrite: boolean): Promise<Place[]> {
    const { places, items } = await this.resolve(actor, paths, needWrite, app);
    const why = misfit(rule, app.id, items);
    if (why) throw new AppError('not_applicable', { reason: why }, { reason: why });
    return places;
  }

  /** `GET /actions`: every action and view the caller may use; with `paths`, only those fitting that selection. */
  async list(actor: Actor, paths?: string[]) {
    this.gate();
    // The selection is resolved once (an unreachable one fits nothing); each rule is then judged on it.
    const sel = paths?.length
      ? await this.resolve(actor, paths, false).then(
          (r) => r.items,
          () => null,
        )
      : undefined;
    const fits = (app: InstalledApp, rule: AppliesRule | undefined, needWrite = false) => {
      if (sel === undefined) return true;
      if (sel === null) return false;
      const mine = sel.map((i) => (i.lockedBy === app.id ? { ...i, writable: true } : i));
      return misfit(rule, app.id, mine) === null && (!needWrite || mine.every((i) => i.writable));
    };
    const actions: unknown[] = [];
    const views: unknown[] = [];
    const openRules: unknown[] = [];
    const enabled = (await this.d.repo.list(actorTenant(actor))).filter((x) => x.enabled);
    const running = await Promise.all(enabled.map((x) => this.d.licenses.running(x)));
    for (const app of enabled.filter((_, i) => running[i])) {
      const icon = (file?: string) => (file ? `/api/files/plugins/icon/${app.id}/${file.slice('icons/'.length)}` : undefined);
      for (const a of app.manifest.actions) {
        if (!this.may(actor, app, a.id, actionDefault(a)) || !fits(app, a.applies, writes(a))) continue;
        actions.push({
          plugin: app.id,
          id: a.id,
          key: `plugin:${app.id}/${a.id}`,
          label: labelMap(app, a.label),
          icon: icon(a.icon) ?? null,
          applies: a.applies ?? {},
          view: a.view ?? null,
          view_placement: a.view_placement ?? 'dialog',
          confirm: a.confirm ? labelMap(app, a.confirm) : null,
          min_role: a.min_role ?? (writes(a) ? 'editor' : 'viewer'),
          danger: !!a.danger,
          output_mode: a.output_mode ?? 'none',
          read_only_ok: !!a.read_only_ok,
        });
      }
      for (const v of app.manifest.views) {
        if (!this.may(actor, app, v.id, 'viewer') || !fits(app, v.applies)) continue;
        views.push({
          plugin: app.id,
          id: v.id,
          placement: v.placement,
          label: labelMap(app, v.label),
          ...(v.icon && { icon: icon(v.icon) }),
          ...(v.applies && { applies: v.applies }),
        });
      }
      // "Open with": a rule is listed when the caller may use its view or action (and, with paths, it fits them).
      for (const o of app.manifest.open ?? []) {
        const target = o.view ? app.manifest.views.find((v) => v.id === o.view) : app.manifest.actions.find((a) => a.id === o.action);
        if (!target) continue;
        const def = o.view ? 'viewer' : actionDefault(target as ManifestAction);
        if (!this.may(actor, app, target.id, def)) continue;
        // A file fits by its extension or by its type (either list).
        const needWrite = !o.view && writes(target as ManifestAction);
        if (!(o.ext?.length && fits(app, { kind: 'file', ext: o.ext }, needWrite)) && !(o.mime?.length && fits(app, { kind: 'file', mime: o.mime }, needWrite)))
          continue;
        const label = o.label ?? target.label;
        openRules.push({
          plugin: app.id,
          ext: o.ext ?? [],
          mime: o.mime ?? [],
          view: o.view ?? null,
          action: o.action ?? null,
          label: labelMap(app, label),
          default: !!o.default,
        });
      }
    }
    return { actions, views, open_rules: openRules };
  }

  private viewOf(app: InstalledApp, id: string): ManifestView {
    return (
      app.manifest.views.find((v) => v.id === id) ??
      (() => {
        throw new AppError('not_found', { path: `${app.id}/${id}` });
      })()
    );
  }

  private async surface(actor: Actor, app: InstalledApp, view: string, fn: 'view' | 'event', input: Record<string, unknown>, lang: string) {
    const host = buildHostApi(this.d.host(), { app, actor, lang });
    return this.d.runtime.call(app, fn, { view, lang, settings: app.settings, ...input }, host);
  }

  private remember(actor: Actor, app: InstalledApp, view: string, s: Surface): Surface {
    this.memory.set(actor, app.id, view, formFields(s));
    return s;
  }

  /** `POST /actions/{plugin}/{action}/run`: 202 with the op, or 200 with the view's opening surface when the action has a view and no params. */
  async run(actor: Actor, lang: string, plugin: string, actionId: string, body: { paths?: unknown; params?: unknown }) {
    const app = await this.app(actor, plugin);
    const action =
      app.manifest.actions.find((a) => a.id === actionId) ??
      (() => {
        throw new AppError('not_found', { path: `${plugin}/${actionId}` });
      })();
    this.require(actor, app, action.id, actionDefault(action));
    if (body.params !== undefined && bytesOf(body.params) > RUN_LIMITS.params_bytes)
      throw new AppError('payload_too_large', { max: RUN_LIMITS.params_bytes }, { field: 'params', max: RUN_LIMITS.params_bytes });
    const places = await this.select(actor, app, body.paths, action.applies, writes(action));
    if (action.view && body.params === undefined) {
      const paths = await describe(this.d.files, actor, places);
      const s = sanitiseSurface(await this.surface(actor, app, action.view, 'view', { paths, action: action.id }, lang));
      return { status: 200, body: { surface: this.remember(actor, app, action.view, s) } };
    }
    const id = await this.d.jobs.enqueue(app, actor, action.id, places, body.params ?? {}, lang);
    return { status: 202, body: { op: id, job_id: id } };
  }

  /** `GET /views/{plugin}/{view}`: the opening surface. */
  async view(actor: Actor, lang: string, plugin: string, viewId: string, q: { path?: string | string[]; section?: string }) {
    const app = await this.app(actor, plugin);
    const view = this.viewOf(app, viewId);
    this.require(actor, app, view.id, 'viewer');
    const given = q.path === undefined ? [] : Array.isArray(q.path) ? q.path : [q.path];
    const places = given.length ? await this.select(actor, app, given, view.applies, false) : [];
    const paths = await describe(this.d.files, actor, places);
    const s = sanitiseSurface(await this.surface(actor, app, view.id, 'view', { paths, section: q.section ?? null }, lang));
    return { surface: this.remember(actor, app, view.id, s) };
  }

  /** `POST /views/{plugin}/{view}/event`: 200 `{surface}`, or 202 `{op, job_id}` when the app answers with a job. */
  async event(
    actor: Actor,
    lang: string,
    plugin: string,
    viewId: string,
    b: { paths?: unknown; state?: unknown; event?: unknown; action_id?: unknown; data?: unknown },
  ) {
    const app = await this.app(actor, plugin);
    const view = this.viewOf(app, viewId);
    this.require(actor, app, view.id, 'viewer');
    if (!EVENTS.includes(b.event as never)) throw validation('event', `one of ${EVENTS.join(', ')}`);
    const data = b.data === undefined ? {} : b.data;
    if (!data || typeof data !== 'object' || Array.isArray(data)) throw validation('data', 'an object');
    if (bytesOf(data) + bytesOf(b.state) > RUN_LIMITS.params_bytes)
      throw new AppError('payload_too_large', { max: RUN_LIMITS.params_bytes }, { field: 'data', max: RUN_LIMITS.params_bytes });
    if (b.action_id !== undefined && (typeof b.action_id !== 'string' || b.action_id.length > 128)) throw validation('action_id', 'a footer action id');
    if (b.event === 'submit') checkSubmission(this.memory.get(actor, app.id, view.id), data as Record<string, unknown>);
    const places = b.paths === undefined ? [] : await this.select(actor, app, b.paths, view.applies, false);
    const paths = await describe(this.d.files, actor, places);
    const r = (await this.surface(
      actor,
      app,
      view.id,
      'event',
      { paths, state: b.state ?? null, event: b.event, action_id: b.action_id ?? null, data },
      lang,
    )) as Record<string, unknown> | null;
    const answer = (r && typeof r === 'object' && !('nodes' in r) ? r : { surface: r }) as {
      surface?: unknown;
      job?: { action?: unknown; params?: unknown };
      errors?: unknown;
    };
    if (Array.isArray(answer.errors) && answer.errors.length) throw appFieldErrors(answer.errors);
    const surface = answer.surface === undefined ? undefined : this.remember(actor, app, view.id, sanitiseSurface(answer.surface));
    if (answer.job) {
      const action = app.manifest.actions.find((a) => a.id === answer.job!.action);
      if (!action) throw new AppError('app_failed', { plugin: app.id, reason: 'unknown_action' }, { plugin: app.id, reason: 'unknown_action' });
      this.require(actor, app, action.id, actionDefault(action));
      if (bytesOf(answer.job.params) > RUN_LIMITS.params_bytes)
        throw new AppError('payload_too_large', { max: RUN_LIMITS.params_bytes }, { field: 'params', max: RUN_LIMITS.params_bytes });
      const jobPlaces = await this.select(actor, app, b.paths ?? [], action.applies, writes(action));
      const id = await this.d.jobs.enqueue(app, actor, action.id, jobPlaces, answer.job.params ?? {}, lang);
      return { status: 202, body: { op: id, job_id: id, ...(surface && { surface }) } };
    }
    return { status: 200, body: { surface: surface ?? sanitiseSurface(null) } };
  }

  /** `GET /users`: the people picker, for an app that declares `users.lookup` and a caller holding `app.<app>.users.lookup`. */
  async users(actor: Actor, plugin: string, q: string) {
    const app = await this.app(actor, plugin);
    requireUserLookup(actor, app);
    const term = q.trim().slice(0, 100);
    return { users: term ? await this.d.findUsers(app, term, 20) : [] };
  }

  /** `GET /license/{plugin}`: `{status, valid_until?, updates_until?}`, computed offline (licenses.ts); a held app answers too. */
  async license(s: TenantScope, plugin: string) {
    this.gate();
    const app = await this.d.repo.get(s, plugin);
    if (!app) throw new AppError('not_found', { path: plugin });
    return this.d.licenses.status(app);
  }

  /** An icon file of an installed app (the `icon` URLs of the rows). */
  async icon(actor: Actor, plugin: string, name: string): Promise<Buffer> {
    const app = await this.app(actor, plugin);
    const b64 = app.icons[`icons/${name}`];
    if (!b64) throw new AppError('not_found', { path: name });
    return Buffer.from(b64, 'base64');
  }
}

/** An app's own verdict on submitted values (`errors: [{key, code: 'required'|'invalid', reason?}]`) as the spec's 422. */
export function appFieldErrors(list: unknown[]): AppError {
  const items = list
    .slice(0, 64)
    .map((e) => e as { key?: unknown; code?: unknown; reason?: unknown })
    .filter((e) => typeof e.key === 'string');
  const required = items.filter((e) => e.code === 'required').map((e) => String(e.key).slice(0, 128));
  const invalid = items.filter((e) => e.code !== 'required').map((e) => String(e.key).slice(0, 128));
  const reasons = Object.fromEntries(
    items.map((e) => [String(e.key).slice(0, 128), typeof e.reason === 'string' ? e.reason.slice(0, 300) : String(e.code ?? 'invalid')]),
  );
  const fields = [...required, ...invalid];
  return new AppError(required.length ? 'required' : 'invalid', { fields: fields.join(', ') }, { fields, invalid, required, reasons });
}
