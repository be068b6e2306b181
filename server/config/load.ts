/**
 * Builds the one frozen Config from SERVICE_* environment variables and an
 * optional JSON/YAML file (`SERVICE_CONFIG`). Every bad key is collected before
 * failing, so an operator fixes them all in one go.
 */
import { readFileSync } from 'node:fs';
import { homedir, platform } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { lazyRequire } from '../lib/lazy';
import { SETTINGS, type Config, type SettingKey } from './schema';
import { VERSION } from '../version';

/** The YAML parser loads only when a YAML config file is given (`service version` and most starts need none). */
const yaml = lazyRequire<typeof import('yaml')>('yaml');

export class ConfigError extends Error {
  constructor(readonly problems: Array<{ key: string; reason: string }>) {
    super('invalid configuration:\n' + problems.map((p) => `  ${p.key}: ${p.reason}`).join('\n'));
    this.name = 'ConfigError';
  }
}

const ENV_KEYS = new Set(Object.values(SETTINGS).map((s) => s.key));
/** Config-file names that are not the key's own (`external_services.docserver.url` → SERVICE_DOCSERVER_URL), flattened. */
const FILE_ALIASES = new Map(
  Object.values(SETTINGS).flatMap((s): Array<[string, string]> => ('file' in s && s.file ? [[s.file.replace(/\./g, '_').toUpperCase(), s.key]] : [])),
);

/** `{update: {channel: 'beta'}}` → `{SERVICE_UPDATE_CHANNEL: 'beta'}`; keys unknown to the schema are problems. */
export function flattenFile(obj: Record<string, unknown>, problems: ConfigError['problems']): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (prefix: string, v: unknown, path: string) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      const asKey = 'SERVICE_' + prefix;
      // A JSON-valued setting (e.g. default_storage.config) takes the object whole.
      if (prefix && ENV_KEYS.has(asKey) && SETTINGS.defaultStorageConfig.key === asKey) {
        out[asKey] = JSON.stringify(v);
        return;
      }
      for (const [k, child] of Object.entries(v)) visit(prefix ? `${prefix}_${k.toUpperCase()}` : k.toUpperCase(), child, path ? `${path}.${k}` : k);
      return;
    }
    const key = ENV_KEYS.has('SERVICE_' + prefix) ? 'SERVICE_' + prefix : ENV_KEYS.has(prefix) ? prefix : (FILE_ALIASES.get(prefix) ?? null);
    if (!key) problems.push({ key: `${path} (config file)`, reason: 'unknown setting' });
    else out[key] = v === null || v === undefined ? '' : String(v);
  };
  visit('', obj, '');
  return out;
}

export function defaultDataDir(): string {
  const home = homedir();
  if (platform() === 'darwin') return join(home, 'Library', 'Application Support', 'Filedock');
  if (platform() === 'win32') return join(process.env.APPDATA ?? join(home, 'AppData', 'Roaming'), 'Filedock');
  return join(process.env.XDG_DATA_HOME ?? join(home, '.local', 'share'), 'filedock');
}

/** Parses env (+ file) into a frozen Config; throws ConfigError naming every bad key. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: ConfigError['problems'] = [];
  let fileValues: Record<string, string> = {};
  const file = env.SERVICE_CONFIG;
  if (file) {
    try {
      const text = readFileSync(file, 'utf8');
      const parsed = /\.json$/i.test(file) ? JSON.parse(text) : yaml().parse(text);
      if (parsed !== null && (typeof parsed !== 'object' || Array.isArray(parsed))) throw new Error('top level must be an object');
      fileValues = flattenFile(parsed ?? {}, problems);
    } catch (e) {
      problems.push({ key: 'SERVICE_CONFIG', reason: `cannot read ${file}: ${(e as Error).message}` });
    }
  }
  const out: Record<string, unknown> = {};
  for (const [name, setting] of Object.entries(SETTINGS) as Array<[SettingKey, (typeof SETTINGS)[SettingKey]]>) {
    const raw = env[setting.key] ?? fileValues[setting.key] ?? setting.default;
    const r = (setting.parse as (raw: string) => { ok: boolean; value?: unknown; reason?: string })(raw);
    if (r.ok) out[name] = r.value;
    else problems.push({ key: setting.key, reason: `${r.reason} (got ${setting.secret ? '***' : JSON.stringify(raw)})` });
  }
  // Where the spec gives 0 a meaning: "0 = the default" for these.
  if (out.sessionTtl === 0) out.sessionTtl = 14 * 86_400_000;
  if (out.thumbsUrlTtl === 0) out.thumbsUrlTtl = 86_400_000;
  if (typeof out.updateInterval === 'number' && out.updateInterval < 3_600_000) out.updateInterval = 3_600_000;
  if (out.adminPassword && String(out.adminPassword).length < 8) problems.push({ key: 'SERVICE_ADMIN_PASSWORD', reason: 'must be at least 8 characters' });
  if (out.adminPassword && !out.adminEmail) problems.push({ key: 'SERVICE_ADMIN_EMAIL', reason: 'required with SERVICE_ADMIN_PASSWORD' });
  const dataDir = String(out.dataDir || defaultDataDir());
  if (problems.length) throw new ConfigError(problems);
  return Object.freeze({ ...out, dataDirResolved: isAbsolute(dataDir) ? dataDir : resolve(dataDir), version: VERSION }) as Config;
}
