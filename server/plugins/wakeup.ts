/**
 * The wake-up (SPEC App plugins rule 5, Limits "App wake-up"; docs/app-plugins.md,
 * "Wake-up"): every `intervalMs` (an hour) each enabled, licensed app holding
 * the `schedule` permission has its exported `tick({now, settings})` called
 * with a read-only scope (no actor: no files, no writes; kv reads, i18n,
 * GET/HEAD to approved hosts). It answers up to 64 items
 * `{key, due_at, action_id, paths, params}`; each item due now runs once per
 * (key, due_at) as an ordinary plugin-action job with no person (the system
 * actor, owner null: admins see the op), reaching only the files it names,
 * and each of those must carry this app's lock or one of its `app_state`
 * items (a person who could change the file let the app mark it).
 * The first round is `firstDelayMs` (30 s) after start; then rounds run every
 * minute (or a quarter of `intervalMs` when that is shorter) and wake the apps whose last wake-up
 * is at least `intervalMs` old; items a wake-up answered that fall due before
 * the next one are remembered (in memory) and queued by the round after
 * their due time. The claim is one conditional statement, so
 * of several instances on one database one wakes an app; a crashing or
 * looping tick is logged and recorded and never stops the others. Apps are
 * the tenant's (docs/tenants.md, "Step 1: apps"): a round goes tenant by
 * tenant, and a scheduled job runs as a system actor bound to the app's
 * tenant, so its paths resolve and its op is queued there.
 */
import { systemActor } from '../auth';
import type { TenantScope } from '../db';
import { isAppError } from '../errors';
import type { FileService, Place } from '../files';
import { buildHostApi, type HostDeps } from './host/host-api';
import type { PluginJobs } from './jobs';
import type { AppLicenses } from './licenses';
import type { AppsRepo, InstalledApp } from './registry/apps.repo';
import type { AppHostRepo } from './registry/host.repo';
import type { AppRuntime } from './runtime';
import { RUN_LIMITS } from './actions/service';

export const WAKEUP_LIMITS = { items: 64, key_chars: 128, keep_runs_ms: 30 * 86_400_000 };

export interface WakeupDeps {
  repo: AppsRepo;
  hostRepo: AppHostRepo;
  runtime: AppRuntime;
  licenses: AppLicenses;
  jobs: PluginJobs;
  files: FileService;
  host: () => HostDeps;
  /** Every tenant (a round wakes each one's apps). */
  tenants: () => Promise<TenantScope[]>;
  /** Apps off (operator or admin): no wake-ups. */
  off: () => string | null;
  log: (msg: string) => void;
}

export interface WakeupOptions {
  /** Between an app's wake-ups (SPEC: an hour); 0 = never. */
  intervalMs: number;
  /** The first round after start (SPEC: 30 s). */
  firstDelayMs: number;
}

/** What a round did with one app (tests and the log). */
export interface WakeupReport {
  plugin: string;
  queued: string[];
  skipped: string[];
  dropped: number;
  error?: string;
}

const bytesOf = (v: unknown) => Buffer.byteLength(JSON.stringify(v ?? null));
const pendingKey = (app: InstalledApp) => `${app.tenant_id}:${app.id}`;

export class AppWakeups {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private round: Promise<WakeupReport[]> | null = null;
  /** Items of the last wake-up due before the next one, by app (`tenant:id`): each round queues those due by then. */
  private pending = new Map<string, unknown[]>();

  constructor(
    private d: WakeupDeps,
    private o: WakeupOptions,
  ) {}

  start() {
    if (this.o.intervalMs <= 0) return;
    this.arm(this.o.firstDelayMs);
  }

  async stop() {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.round?.catch(() => undefined);
  }

  private arm(ms: number) {
    if (this.stopped) return;
    // Rounds every minute (a quarter of a shorter interval): they wake the apps that are due and queue remembered items.
    // A round that fails as a whole (the database away) is logged; the next one comes as usual.
    const round = () => this.runRound().catch((e: Error) => void this.d.log(`app wake-ups: the round failed: ${e.message}`));
    this.timer = setTimeout(() => void round().finally(() => this.arm(Math.min(Math.ceil(this.o.intervalMs / 4), 60_000))), ms);
    this.timer.unref();
  }

  /** One round: wakes every app that is due (at most once per interval, across instances). */
  runRound(): Promise<WakeupReport[]> {
    this.round ??= (async () => {
      const out: WakeupReport[] = [];
      if (this.d.off()) return out;
      const tenants = await this.d.tenants();
      for (const t of tenants) {
        if (this.stopped) break;
        for (const app of await this.d.repo.list(t)) {
          if (this.stopped) break;
          if (!app.enabled || !app.manifest.permissions.includes('schedule')) continue;
          try {
            if (!(await this.d.licenses.running(app))) continue;
            if (!(await this.d.hostRepo.claimWakeup(app, this.o.intervalMs))) {
              await this.duePending(app);
              continue;
            }
            out.push(await this.wake(app));
          } catch (e) {
            this.d.log(`app ${app.id}: the wake-up could not start: ${(e as Error).message}`);
          }
        }
      }
      await this.d.hostRepo.pruneScheduled(tenants, new Date(Date.now() - WAKEUP_LIMITS.keep_runs_ms).toISOString());
      return out;
    })().finally(() => {
      this.round = null;
    });
    return this.round;
  }

  /** Calls one app's `tick` and queues its due items. */
  async wake(app: InstalledApp): Promise<WakeupReport> {
    const report: WakeupReport = { plugin: app.id, queued: [], skipped: [], dropped: 0 };
    const now = new Date();
    let answer: unknown;
    try {
      const host = buildHostApi(this.d.host(), { app, actor: null, lang: app.manifest.default_language });
      answer = await this.d.runtime.call(app, 'tick', { now: now.toISOString(), settings: app.settings }, host);
    } catch (e) {
      report.error = isAppError(e) ? `${e.code}${e.params.reason ? `: ${e.params.reason}` : ''}` : 'failed';
      this.d.log(`app ${app.id}: tick failed (${report.error})`);
      await this.d.hostRepo.wakeupOutcome(app, `failed: ${report.error}`);
      return report;
    }
    const list = Array.isArray(answer) ? answer : Array.isArray((answer as { items?: unknown })?.items) ? (answer as { items: unknown[] }).items : [];
    if (list.length > WAKEUP_LIMITS.items) {
      report.dropped = list.length - WAKEUP_LIMITS.items;
      this.d.log(`app ${app.id}: tick answered ${list.length} items; the ${report.dropped} after the first ${WAKEUP_LIMITS.items} were dropped`);
    }
    const later: unknown[] = [];
    const horizon = now.getTime() + this.o.intervalMs;
    for (const raw of list.slice(0, WAKEUP_LIMITS.items)) {
      const why = await this.queue(app, raw, now, report);
      const due = Date.parse(String((raw as { due_at?: unknown })?.due_at));
      if (why === 'not due yet' && due <= horizon) later.push(raw);
      if (why) {
        const key = typeof (raw as { key?: unknown })?.key === 'string' ? String((raw as { key: string }).key).slice(0, WAKEUP_LIMITS.key_chars) : '?';
        report.skipped.push(`${key}: ${why}`);
        if (why !== 'not due yet' && why !== 'already run') this.d.log(`app ${app.id}: scheduled item ${key} skipped: ${why}`);
      }
    }
    if (later.length) this.pending.set(pendingKey(app), later);
    else this.pending.delete(pendingKey(app));
    await this.d.hostRepo.wakeupOutcome(app, `ok: ${report.queued.length} queued, ${report.skipped.length} skipped, ${report.dropped} dropped`);
    return report;
  }

  /**
   * Between wake-ups: queues the remembered items that are due now (same checks, same once-only claim).
   * They are kept in memory: after a restart they wait for the app's next wake-up.
   */
  private async duePending(app: InstalledApp) {
    const items = this.pending.get(pendingKey(app));
    if (!items) return;
    const now = new Date();
    const report: WakeupReport = { plugin: app.id, queued: [], skipped: [], dropped: 0 };
    const left = [];
    for (const raw of items) {
      const why = await this.queue(app, raw, now, report);
      if (why === 'not due yet') left.push(raw);
      else if (why && why !== 'already run') this.d.log(`app ${app.id}: scheduled item skipped: ${why}`);
    }
    if (left.length) this.pending.set(pendingKey(app), left);
    else this.pending.delete(pendingKey(app));
  }

  /** Queues one item when it is due and sound; the reason it was not, else null. */
  private async queue(app: InstalledApp, raw: unknown, now: Date, report: WakeupReport): Promise<string | null> {
    const it = (raw && typeof raw === 'object' && !Array.isArray(raw) ? raw : {}) as {
      key?: unknown;
      due_at?: unknown;
      action_id?: unknown;
      paths?: unknown;
      params?: unknown;
    };
    if (typeof it.key !== 'string' || !it.key || it.key.length > WAKEUP_LIMITS.key_chars) return `key must be 1 to ${WAKEUP_LIMITS.key_chars} characters`;
    const due = typeof it.due_at === 'string' ? Date.parse(it.due_at) : NaN;
    if (!Number.isFinite(due)) return 'due_at must be an ISO 8601 time';
    if (due > now.getTime()) return 'not due yet';
    const action = app.manifest.actions.find((a) => a.id === it.action_id);
    if (!action) return `no action ${String(it.action_id)}`;
    const paths = it.paths === undefined ? [] : it.paths;
    if (!Array.isArray(paths) || paths.some((p) => typeof p !== 'string') || paths.length > RUN_LIMITS.paths)
      return `paths must be a list of at most ${RUN_LIMITS.paths} paths`;
    if (bytesOf(it.params) > RUN_LIMITS.params_bytes) return `params over ${RUN_LIMITS.params_bytes} bytes`;
    const places: Place[] = [];
    // No person: the system, in the app's tenant only (its paths are that tenant's storages).
    const system = systemActor('app-wakeup', { tenant_id: app.tenant_id });
    const me = this.d.files.forActor(system);
    for (const p of paths as string[]) {
      try {
        const place = me.target(p).place;
        const own =
          this.d.files.locks.of(place.storage_id, place.rel)?.plugin === app.id ||
          (await this.d.files.appState.of(place.storage_id, place.rel)).some((s) => s.startsWith(`${app.id}:`));
        if (!own) return `${p} carries no lock or state of this app`;
        places.push(place);
      } catch {
        return `${p} is not reachable`;
      }
    }
    const dueAt = new Date(due).toISOString();
    if (!(await this.d.hostRepo.claimScheduled(app, it.key, dueAt))) return 'already run';
    const op = await this.d.jobs.enqueue(app, system, action.id, places, it.params ?? {}, app.manifest.default_language);
    await this.d.hostRepo.scheduledOp(app, it.key, dueAt, op);
    report.queued.push(op);
    return null;
  }
}
