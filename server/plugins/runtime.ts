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
import type { InstalledApp } from './registry/apps.repo';

export interface RuntimeOptions {
  memoryBytes: number;
  log: (msg: string) => void;
}

export class AppRuntime {
  private running = new Map<string, { digest: string; sandbox: Promise<AppSandbox> }>();
  constructor(private o: RuntimeOptions) {}

  /** Starts the warm spare (boot), so the first app's cold start finds it ready. */
  warm() {
    warmSandboxes(this.o.memoryBytes);
  }

  private sandboxOf(app: InstalledApp): Promise<AppSandbox> {
    const cur = this.running.get(app.id);
    if (cur && cur.digest === app.digest) return cur.sandbox;
    if (cur) void this.stop(app.id);
    const sandbox = AppSandbox.start({
      code: app.code,
      limits: { memory_bytes: this.o.memoryBytes, load_timeout_ms: app.manifest.call_timeout_ms },
      onLog: (line) => this.o.log(`app ${app.id}: ${line}`),
    });
    sandbox.catch(() => this.running.get(app.id)?.sandbox === sandbox && this.running.delete(app.id));
    this.running.set(app.id, { digest: app.digest, sandbox });
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
  async stop(id: string) {
    const cur = this.running.get(id);
    this.running.delete(id);
    await cur?.sandbox.then(
      (s) => s.close(),
      () => undefined,
    );
  }

  async close() {
    await Promise.all([...this.running.keys()].map((id) => this.stop(id)));
    await stopSpare();
  }
}
