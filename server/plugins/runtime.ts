/**
 * The running apps: one sandbox per installed, enabled app, started at its
 * first call (from the warm spare) and closed when the app is upgraded,
 * disabled or removed. A sandbox failure becomes `app_failed` (502) with the
 * sandbox's reason (`timeout`, `out_of_memory`, `crashed`, `app_error`, ...);
 * the app's own message is kept in `details` for the admin, never in the
 * sentence.
 */
import { AppError } from '../errors';
import { AppSandbox, SandboxError, warmSandboxes, stopSpare, type HostApi } from './sandbox/sandbox';
import type { AppRef, InstalledApp } from './registry/apps.repo';

export interface RuntimeOptions {
  memoryBytes: number;
  log: (msg: string) => void;
}

/** The running map's key: the same app in two tenants runs in two sandboxes (neither sees the other's memory). */
const keyOf = (app: AppRef) => `${app.tenant_id}:${app.id}`;

export class AppRuntime {
  private running = new Map<string, { app: AppRef; digest: string; sandbox: Promise<AppSandbox> }>();
  constructor(private o: RuntimeOptions) {}

  /** Starts the warm spare (boot), so the first app's cold start finds it ready. */
  warm() {
    warmSandboxes(this.o.memoryBytes);
  }

  private sandboxOf(app: InstalledApp): Promise<AppSandbox> {
    const key = keyOf(app);
    const cur = this.running.get(key);
    if (cur && cur.digest === app.digest) return cur.sandbox;
    if (cur) void this.stop(app);
    const sandbox = AppSandbox.start({
      code: app.code,
      limits: { memory_bytes: this.o.memoryBytes, load_timeout_ms: app.manifest.call_timeout_ms },
      onLog: (line) => this.o.log(`app ${app.id}: ${line}`),
    });
    sandbox.catch(() => this.running.get(key)?.sandbox === sandbox && this.running.delete(key));
    this.running.set(key, { app: { tenant_id: app.tenant_id, id: app.id }, digest: app.digest, sandbox });
    return sandbox;
  }

  /** Runs `app[fn](input)` with a host API built for this call's caller. */
  async call(app: InstalledApp, fn: string, input: unknown, host: HostApi, signal?: AbortSignal): Promise<unknown> {
    try {
      const sb = await this.sandboxOf(app);
      return await sb.call(fn, input, { host, timeoutMs: app.manifest.call_timeout_ms, signal });
    } catch (e) {
      if (e instanceof SandboxError) {
        if (e.code === 'cancelled') throw new AppError('cancelled');
        throw new AppError(
          'app_failed',
          { plugin: app.id, reason: e.code },
          { plugin: app.id, reason: e.code, detail: e.message.slice(0, 500) },
          `app ${app.id}: ${e.code}: ${e.message}`,
        );
      }
      throw e;
    }
  }

  /** Stops an app's sandbox (upgrade, disable, uninstall); its next call starts a fresh one. */
  async stop(app: AppRef) {
    const cur = this.running.get(keyOf(app));
    this.running.delete(keyOf(app));
    await cur?.sandbox.then(
      (s) => s.close(),
      () => undefined,
    );
  }

  async close() {
    await Promise.all([...this.running.values()].map((r) => this.stop(r.app)));
    await stopSpare();
  }
}
