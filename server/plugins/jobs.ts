/**
 * Plugin jobs (SPEC Operation, Operation status): an action run as an op of
 * kind `plugin-action`, as the actor who asked (restored when it runs: a
 * person disabled since stops it). The app's `action` function gets the
 * selection and the params, reports progress and writes its outputs through
 * the host API (the file service's write gate). The op row speaks the plugin
 * words: `pending`, `running`, `ok`, `failed`, `cancelled`, with `plugin`,
 * `action`, `label`, `outputs`, `open` and errors in the reader's language.
 */
import type { TenantScope } from '../db';
import { actorSpec, actorTenant, type Actor, type ActorRestorer, type ActorSpec } from '../auth';
import { AppError, isAppError } from '../errors';
import type { FileService, Place } from '../files';
import type { JobQueue, Operation } from '../jobs';
import type { PluginOpStatus } from '../contract';
import { t, type Lang } from '../lib/i18n';
import { uiPath } from '../lib/paths';
import { buildHostApi, type HostDeps } from './host/host-api';
import { packText } from './i18n';
import type { AppsRepo, InstalledApp } from './registry/apps.repo';
import type { AppRuntime } from './runtime';
import type { AppLicenses } from './licenses';

export const PLUGIN_JOB = 'plugin-action' as const;

export interface PluginJobPayload {
  actor: ActorSpec;
  plugin: string;
  action: string;
  places: Place[];
  params: unknown;
  lang: string;
  /** Queued from a public app page (docs/app-plugins.md): its result never carries an `open` (SPEC App plugins rule 3). */
  public?: boolean;
  /** That page's share id: only its visitors may follow the op (`GET /api/public/s/{token}/ops/{id}`). */
  page?: number;
}

declare module '../jobs/types' {
  interface JobPayloads {
    'plugin-action': PluginJobPayload;
  }
}

/** What a finished plugin job keeps as its result. */
interface PluginResult {
  outputs: Array<{ path: string }>;
  open?: { path: string; view?: string; action?: string };
  message?: string;
}

export interface JobDeps {
  repo: AppsRepo;
  runtime: AppRuntime;
  files: FileService;
  queue: JobQueue;
  actors: ActorRestorer;
  host: () => HostDeps;
  licenses: AppLicenses;
}

/** The selection as an app receives it: UI paths with what the entry says. */
export async function describe(files: FileService, actor: Actor, places: Place[]) {
  const me = files.forActor(actor, 'refuse');
  return Promise.all(
    places.map(async (p) => {
      const t = me.target(p);
      const e = await me.stat(p);
      return { path: uiPath(t.storage.name, t.rel), name: e.name, type: e.type, size: e.size, mime: e.mime ?? null, modified: new Date(e.mtime).toISOString() };
    }),
  );
}

const openOf = (v: unknown): PluginResult['open'] => {
  const o = v as { path?: unknown; view?: unknown; action?: unknown } | null;
  if (!o || typeof o.path !== 'string' || !o.path.startsWith('/')) return undefined;
  return {
    path: o.path.slice(0, 8192),
    ...(typeof o.view === 'string' && { view: o.view.slice(0, 64) }),
    ...(typeof o.action === 'string' && { action: o.action.slice(0, 64) }),
  };
};

export class PluginJobs {
  constructor(private d: JobDeps) {
    d.queue.register(PLUGIN_JOB, (ctx) => this.run(ctx.payload, ctx), { maxAttempts: 1, concurrency: 2 });
  }

  /** `opts.page`: the share id of the public page that asked for it. The op is the app's tenant's (its actor's). */
  async enqueue(
    app: InstalledApp,
    actor: Actor,
    action: string,
    places: Place[],
    params: unknown,
    lang: string,
    opts: { page?: number } = {},
  ): Promise<string> {
    if (!app.manifest.actions.some((a) => a.id === action)) throw new AppError('not_found', { path: `${app.id}/${action}` });
    // An app acts only for its own tenant's people (and its own tenant's system work).
    if (actorTenant(actor).tenant_id !== app.tenant_id) throw new AppError('not_found', { path: app.id });
    const payload: PluginJobPayload = {
      actor: actorSpec(actor),
      plugin: app.id,
      action,
      places,
      params,
      lang,
      ...(opts.page !== undefined && { public: true, page: opts.page }),
    };
    return this.d.queue.enqueue(PLUGIN_JOB, payload, {
      tenant: { tenant_id: app.tenant_id },
      ownerId: actor.kind === 'system' ? null : actor.principal.id,
      visible: true,
      maxAttempts: 1,
    });
  }

  private async run(
    p: PluginJobPayload,
    ctx: { tenant: TenantScope; progress: (f: number, b?: { done: number; total: number }, m?: string) => void; signal: AbortSignal },
  ): Promise<PluginResult> {
    const actor = await this.d.actors.restore(p.actor);
    // The op's tenant is its app's: the same id in another tenant is not this app.
    const app = await this.d.repo.get(ctx.tenant, p.plugin);
    if (!app || !app.enabled) throw new AppError('not_found', { path: p.plugin });
    await this.d.licenses.require(app);
    const paths = await describe(this.d.files, actor, p.places);
    const outputs: string[] = [];
    // A scheduled job (a wake-up item: no person, the system actor) reaches only the files its item named.
    const reach = actor.kind === 'system' ? p.places : undefined;
    const host = buildHostApi(this.d.host(), { app, actor, lang: p.lang, job: { progress: ctx.progress, outputs, signal: ctx.signal }, reach });
    let r: { open?: unknown; message?: unknown } | null;
    try {
      r = (await this.d.runtime.call(
        app,
        'action',
        { action: p.action, paths, params: p.params, lang: p.lang, settings: app.settings },
        host,
        ctx.signal,
      )) as typeof r;
    } catch (e) {
      // An app that fails with one of its own text keys is reported in the reader's language (see presentPluginOp).
      const detail = isAppError(e) && e.code === 'app_failed' ? String(e.details?.detail ?? '') : '';
      if (detail && packText(app, detail, app.manifest.default_language) !== undefined)
        throw new AppError('app_failed', { plugin: app.id, reason: 'app_error', key: detail }, undefined, `app ${app.id}: ${detail}`);
      throw e;
    }
    const open = p.public ? undefined : openOf(r?.open);
    return { outputs: outputs.map((path) => ({ path })), ...(open && { open }), ...(typeof r?.message === 'string' && { message: r.message.slice(0, 500) }) };
  }

  /** A plugin op queued by the public page of `share` (in its tenant), as `present` shows it; null for any other op. */
  async ofPage(share: TenantScope & { id: number }, id: string, lang: Lang): Promise<Operation | null> {
    const p = (await this.d.queue.payloadOf(share, id)) as PluginJobPayload | undefined;
    const op = p?.page === share.id ? await this.d.queue.get(share, id) : null;
    return op && op.kind === PLUGIN_JOB ? this.present(share, op, lang) : null;
  }

  /** The tenant's plugin op as the spec shows it, in the reader's language; other kinds pass unchanged. */
  async present(s: TenantScope, op: Operation, lang: Lang): Promise<Operation> {
    if (op.kind !== PLUGIN_JOB) return op;
    const p = (await this.d.queue.payloadOf(s, op.id)) as PluginJobPayload | undefined;
    // The app as last read here (no read per op of a list).
    const app = p ? this.d.repo.known(s, p.plugin) : null;
    const action = app?.manifest.actions.find((a) => a.id === p!.action);
    const result = (op.result ?? {}) as Partial<PluginResult>;
    const status: PluginOpStatus = op.status === 'queued' ? 'pending' : op.status === 'completed' ? 'ok' : (op.status as PluginOpStatus);
    const key = op.error_params?.key;
    const errorText =
      op.status !== 'failed' || !op.error_code
        ? null
        : (app && typeof key === 'string' && packText(app, key, lang)) || t(lang, op.error_code, op.error_params ?? {});
    return {
      ...op,
      status,
      plugin: p?.plugin,
      action: p?.action,
      label: app && action ? (packText(app, action.label, lang) ?? action.id) : p?.action,
      message: result.message ?? op.message,
      outputs: result.outputs ?? [],
      ...(op.status === 'completed' && result.open && { open: result.open }),
      error_text: errorText,
    };
  }
}
