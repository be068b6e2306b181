/**
 * Installs and upgrades from a store as operations (docs/app-store.md,
 * "Installs as operations"): asked with `Prefer: respond-async`, the route
 * checks the plan first (every refusal that needs nothing downloaded answers
 * at once), then queues an `app_store.install` op owned by the admin and
 * answers 202 with its id. The op downloads with progress (bytes of the
 * package) and installs as the admin who asked; it is cancelled like any op.
 * A restart re-runs it: finding the version it was to install already there,
 * it ends done.
 */
import { actorSpec, actorTenant, type Actor, type ActorRestorer, type ActorSpec } from '../auth';
import { isAppError } from '../errors';
import type { JobContext, JobQueue } from '../jobs';
import type { AppStore, InstallRequest, StoreAction } from './service';

export const INSTALL_JOB = 'app_store.install';

export interface InstallPayload {
  action: StoreAction;
  req: InstallRequest;
  actor: ActorSpec;
}

declare module '../jobs/types' {
  interface JobPayloads {
    'app_store.install': InstallPayload;
  }
}

export class StoreInstallOps {
  constructor(private d: { store: AppStore; queue: JobQueue; actors: ActorRestorer }) {}

  register(): void {
    // One at a time (two installs of one app would race); never retried blindly: the admin asks again.
    this.d.queue.register(INSTALL_JOB, (ctx) => this.run(ctx), { concurrency: 1, maxAttempts: 1, timeoutMs: 15 * 60_000 });
  }

  /** Checks the plan (refusals now), then queues the op for the version planned: its id. */
  async request(by: Actor, action: StoreAction, req: InstallRequest): Promise<string> {
    const { v } = await this.d.store.plan(action, req);
    const owner = by.kind === 'system' ? null : by.principal.id;
    return this.d.queue.enqueue(
      INSTALL_JOB,
      { action, req: { ...req, version: v.version }, actor: actorSpec(by) },
      { tenant: actorTenant(by), ownerId: owner, visible: owner !== null },
    );
  }

  private async run(ctx: JobContext<InstallPayload>) {
    const { action, req } = ctx.payload;
    const by = await this.d.actors.restore(ctx.payload.actor);
    ctx.signal.throwIfAborted();
    try {
      let bytes: { done: number; total: number } | undefined;
      const progress = (done: number, total: number) => ctx.progress(Math.min(0.9, (0.9 * done) / total), (bytes = { done, total }));
      const installed = await this.d.store[action](by, req, { progress, signal: ctx.signal });
      // Reports are throttled: the last one (the whole package) is written with the end.
      ctx.progress(1, bytes);
      return installed;
    } catch (e) {
      // A re-run after a restart that came once the install had landed: the version it was for is there.
      if (isAppError(e) && e.code === 'intent_installed' && e.params.installed === req.version) return { id: req.id, version: req.version };
      throw e;
    }
  }
}
