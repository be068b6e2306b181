/**
 * Storage config against a driver descriptor: aliases, defaults, coercion,
 * required fields, the root-path guard, and the secrets at rest. Problems are
 * returned, not thrown: the admin API refuses them, the CLI only warns about
 * missing required fields.
 */
import { AppError } from '../errors';
import { decrypt, encrypt, isEncrypted } from '../lib/crypto';
import type { DriverDescriptor, DriverField, DriverModule } from './types';

export type StorageConfig = Record<string, unknown>;

export interface ConfigProblem {
  field: string;
  message: string;
  /** `required` problems are the only ones the CLI lets through (as warnings). */
  kind: 'required' | 'type' | 'root' | 'driver';
}

export interface ResolvedConfig {
  config: StorageConfig;
  problems: ConfigProblem[];
}

/** What a secret reads back as; an incoming `***` on update keeps the stored secret. */
export const MASK = '***';

const isBlank = (v: unknown): boolean => v === undefined || v === null || (typeof v === 'string' && v.trim() === '');
const isObject = (v: unknown): v is StorageConfig => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Moves values written under an alias to the canonical key (the canonical key
 * wins when both are set). Unknown keys are kept verbatim: the spec passes
 * them through to the driver.
 */
export function canonicalKeys(desc: DriverDescriptor, raw: StorageConfig): StorageConfig {
  const out: StorageConfig = { ...raw };
  for (const f of desc.fields) {
    for (const alias of f.aliases ?? []) {
      if (!(alias in out)) continue;
      if (isBlank(out[f.key])) out[f.key] = out[alias];
      delete out[alias];
    }
  }
  return out;
}

/**
 * Resolves `raw` for `mod`: aliases, defaults, coercion (`int` from numeric
 * strings, `bool` from 'true'/'1'/'false'/'0'), required fields, the root
 * guard on the field marked `root` (empty, `/`, `.` or a `..` segment), then
 * the module's own `validate`. A raw value that is not an object is one problem.
 */
export function resolveConfig(mod: DriverModule, raw: unknown): ResolvedConfig {
  if (!isObject(raw)) return { config: {}, problems: [{ field: 'config', message: 'must be a JSON object', kind: 'type' }] };
  const config = canonicalKeys(mod.descriptor, raw);
  const problems: ConfigProblem[] = [];
  for (const f of mod.descriptor.fields) {
    if (isBlank(config[f.key]) && f.default !== undefined) config[f.key] = f.default;
    if (isBlank(config[f.key])) {
      // A blank optional value is dropped so drivers see it as absent.
      if (config[f.key] !== undefined) delete config[f.key];
      if (f.required) problems.push({ field: f.key, message: 'is required', kind: 'required' });
    } else {
      const c = coerce(f, config[f.key]);
      if ('problem' in c) problems.push({ field: f.key, message: c.problem, kind: 'type' });
      else config[f.key] = c.value;
    }
    if (f.root) {
      const issue = rootIssue(config[f.key]);
      if (issue && !problems.some((p) => p.field === f.key)) problems.push({ field: f.key, message: issue, kind: 'root' });
    }
  }
  if (problems.length === 0 && mod.validate) for (const p of mod.validate(config)) problems.push({ field: p.field, message: p.message, kind: 'driver' });
  return { config, problems };
}

/** The root guard: a storage must point at a sub-folder or prefix, never the bucket or filesystem root. */
export function rootIssue(value: unknown): string | null {
  if (isBlank(value)) return 'must name a sub-folder, not the root';
  if (typeof value !== 'string') return 'must be a path';
  const segs = value.split(/[\\/]+/).filter((s) => s !== '' && s !== '.');
  if (segs.includes('..')) return 'must not contain ".."';
  return segs.length === 0 ? 'must name a sub-folder, not the root' : null;
}

function coerce(f: DriverField, v: unknown): { value: unknown } | { problem: string } {
  switch (f.type) {
    case 'int': {
      const n = typeof v === 'string' && /^\s*-?\d+\s*$/.test(v) ? Number(v) : v;
      return typeof n === 'number' && Number.isSafeInteger(n) ? { value: n } : { problem: 'must be a whole number' };
    }
    case 'bool': {
      if (typeof v === 'boolean') return { value: v };
      const s = String(v).trim().toLowerCase();
      if (['true', '1', 'yes', 'on'].includes(s)) return { value: true };
      if (['false', '0', 'no', 'off'].includes(s)) return { value: false };
      return { problem: 'must be true or false' };
    }
    case 'select':
      return f.options && !f.options.includes(String(v)) ? { problem: `must be one of ${f.options.join(', ')}` } : { value: String(v) };
    default:
      return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean'
        ? { value: typeof v === 'string' ? v : String(v) }
        : { problem: 'must be text' };
  }
}

const secretFields = (desc: DriverDescriptor): DriverField[] => desc.fields.filter((f) => f.secret);

/** Encrypts the secret fields of a resolved config for storage; already-encrypted values stay as they are. */
export function sealSecrets(desc: DriverDescriptor, cfg: StorageConfig, key: Buffer): StorageConfig {
  const out = { ...cfg };
  for (const f of secretFields(desc)) {
    const v = out[f.key];
    if (typeof v === 'string' && v !== '' && !isEncrypted(v)) out[f.key] = encrypt(key, v);
  }
  return out;
}

/**
 * Decrypts the secret fields for the driver. A secret sealed under another
 * key → `storage_unavailable` (the install's secret key changed).
 */
export function openSecrets(desc: DriverDescriptor, cfg: StorageConfig, key: Buffer): StorageConfig {
  const out = { ...cfg };
  for (const f of secretFields(desc)) {
    const v = out[f.key];
    if (!isEncrypted(v)) continue;
    try {
      out[f.key] = decrypt(key, v);
    } catch {
      throw new AppError('storage_unavailable', { reason: `the stored ${f.key} cannot be decrypted (the secret key changed)` });
    }
  }
  return out;
}

/** The config as admins read it: every set secret (under its key or an alias) reads `***`. */
export function maskSecrets(desc: DriverDescriptor, cfg: StorageConfig): StorageConfig {
  const out = { ...cfg };
  for (const f of secretFields(desc)) for (const k of [f.key, ...(f.aliases ?? [])]) if (!isBlank(out[k])) out[k] = MASK;
  return out;
}

/**
 * The config to store after an update: `incoming` with aliases resolved,
 * where a secret sent back as `***` (or left out) keeps the stored one and an
 * empty value clears it. Non-secret keys come from `incoming` only.
 */
export function mergeForUpdate(desc: DriverDescriptor, oldStored: StorageConfig, incoming: StorageConfig): StorageConfig {
  const out = canonicalKeys(desc, incoming);
  for (const f of secretFields(desc)) {
    if ((out[f.key] === MASK || !(f.key in out)) && oldStored[f.key] !== undefined) out[f.key] = oldStored[f.key];
    else if (out[f.key] === MASK) delete out[f.key];
  }
  return out;
}
