/**
 * `plugin:<name>` storage drivers: separate programs speaking
 * `filedock-storage/1` (docs/plugin-driver-protocol.md). A plugin is loaded by
 * starting it once: handshake (protocol, `service_range`, descriptor), a
 * `ping` probe, shutdown. Only then is it offered as a driver.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { AppError, isAppError } from '../../../errors';
import type { DriverModule } from '../../types';
import { PluginConnection } from './connection';
import { DEFAULT_PLUGIN_TIMEOUTS, PluginDriver, type PluginTimeouts } from './driver';
import { handshake } from './handshake';

export { PluginDriver } from './driver';
export { PROTOCOL } from './protocol';

export interface PluginLoadOptions {
  /** The running service version, checked against the plugin's `service_range`. */
  serviceVersion: string;
  timeouts?: Partial<PluginTimeouts>;
}

/**
 * Starts `program`, checks and probes it, and returns its DriverModule
 * (`descriptor.driver` is `plugin:<name>`). Throws `unsupported` with a
 * `reason` when the plugin is incompatible or malformed, `storage_unreachable`
 * when it does not start or answer in time. The probe process is stopped
 * before this returns; each storage gets its own process on first use.
 */
export async function loadPluginDriver(program: string, opts: PluginLoadOptions): Promise<DriverModule> {
  const timeouts = { ...DEFAULT_PLUGIN_TIMEOUTS, ...opts.timeouts };
  const conn = new PluginConnection(program);
  try {
    const hs = await handshake(conn, opts.serviceVersion, timeouts.startMs);
    await conn.call('ping', {}, { idleMs: timeouts.startMs });
    const { descriptor } = hs;
    return {
      descriptor,
      validate(config) {
        return descriptor.fields
          .filter((f) => f.required && (config[f.key] === undefined || config[f.key] === null || config[f.key] === ''))
          .map((f) => ({ field: f.key, message: 'required' }));
      },
      create(config, ctx) {
        return new PluginDriver({ program, name: hs.name, serviceVersion: opts.serviceVersion, config, stateDir: ctx.stateDir, timeouts });
      },
    };
  } finally {
    await conn.shutdown(1000);
  }
}

export interface DiscoveredPlugins {
  modules: DriverModule[];
  /** Programs that were refused, with the reason; one bad plugin never hides the others. */
  failures: Array<{ program: string; error: AppError }>;
}

/**
 * Loads every plugin in `dir` (for example `<data dir>/plugins/`): each
 * `.js`/`.mjs`/`.cjs` file or executable file, and each sub-folder's
 * `index.mjs` or `index.js`. A missing folder yields nothing. Two plugins
 * with the same name: the first in name order wins, the second is a failure.
 */
export async function discoverPlugins(dir: string, opts: PluginLoadOptions): Promise<DiscoveredPlugins> {
  const out: DiscoveredPlugins = { modules: [], failures: [] };
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return out;
  }
  for (const n of names) {
    if (n.startsWith('.')) continue;
    const program = programOf(join(dir, n));
    if (!program) continue;
    try {
      const mod = await loadPluginDriver(program, opts);
      if (out.modules.some((m) => m.descriptor.driver === mod.descriptor.driver))
        throw new AppError('conflict', { reason: 'duplicate plugin name', driver: mod.descriptor.driver });
      out.modules.push(mod);
    } catch (e) {
      out.failures.push({ program, error: isAppError(e) ? e : new AppError('internal', {}, undefined, String(e)) });
    }
  }
  return out;
}

function programOf(path: string): string | null {
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st) return null;
  if (st.isDirectory()) {
    for (const entry of ['index.mjs', 'index.js']) if (statSync(join(path, entry), { throwIfNoEntry: false })?.isFile()) return join(path, entry);
    return null;
  }
  return st.isFile() && (/\.(c|m)?js$/.test(path) || (st.mode & 0o111) !== 0) ? path : null;
}
