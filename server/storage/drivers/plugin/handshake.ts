/**
 * The handshake: the first call on every plugin process. It checks the
 * protocol, the plugin's `service_range` against the running version, and
 * turns the plugin's self-description into a DriverDescriptor.
 */
import { AppError } from '../../../errors';
import type { DriverCapabilities, DriverDescriptor, DriverField, FieldType } from '../../types';
import type { PluginConnection } from './connection';
import { PROTOCOL } from './protocol';
import { satisfies } from '../../../lib/versions';

export interface Handshake {
  name: string;
  /** The plugin's own version, for logs and the admin list. */
  version: string;
  descriptor: DriverDescriptor;
}

const FIELD_TYPES: ReadonlySet<FieldType> = new Set(['string', 'password', 'int', 'bool', 'select', 'text', 'date']);
/** Capabilities protocol 1 can carry; presign, multipart and watch are not in it. */
const CARRIED = ['move', 'copy', 'walk', 'ranges', 'etag'] as const;

const refuse = (reason: string, params: Record<string, string> = {}) =>
  new AppError('unsupported', { reason, ...params }, { reason, ...params }, `plugin refused: ${reason}`);

function field(raw: unknown, plugin: string): DriverField {
  const f = (raw ?? {}) as Record<string, unknown>;
  const key = f.key;
  if (typeof key !== 'string' || !/^[a-z][a-z0-9_]{0,63}$/.test(key)) throw refuse('bad field key');
  const type = f.type as FieldType;
  if (!FIELD_TYPES.has(type)) throw refuse('bad field type', { field: key });
  const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined);
  return {
    key,
    type,
    label: typeof f.label === 'string' ? f.label : key,
    i18n_key: `storage.plugin.${plugin}.${key}`,
    ...(f.required === true ? { required: true } : {}),
    ...(f.root === true ? { root: true } : {}),
    // A password field is always stored encrypted, whatever the plugin says.
    ...(f.secret === true || type === 'password' ? { secret: true } : {}),
    ...(typeof f.placeholder === 'string' ? { placeholder: f.placeholder } : {}),
    ...(typeof f.help === 'string' ? { help: f.help } : {}),
    ...(strings(f.aliases) ? { aliases: strings(f.aliases) } : {}),
    ...(strings(f.options) ? { options: strings(f.options) } : {}),
    ...(['string', 'number', 'boolean'].includes(typeof f.default) ? { default: f.default as string | number | boolean } : {}),
  };
}

/**
 * Runs `handshake` on a fresh connection. Throws `unsupported` (with
 * `reason`) for another protocol, a `service_range` that excludes
 * `serviceVersion`, or a malformed description.
 */
export async function handshake(conn: PluginConnection, serviceVersion: string, idleMs: number): Promise<Handshake> {
  const r = await conn.call<Record<string, unknown>>('handshake', { protocol: PROTOCOL, service_version: serviceVersion }, { idleMs });
  if (r?.protocol !== PROTOCOL) throw refuse('protocol', { protocol: String(r?.protocol) });
  const name = r.name;
  if (typeof name !== 'string' || !/^[a-z][a-z0-9_-]{0,39}$/.test(name)) throw refuse('bad name');
  // `filex_range` is the spelling app manifests use; either is read.
  const range = r.service_range ?? r.filex_range;
  if (typeof range !== 'string' || !satisfies(serviceVersion, range))
    throw refuse('service_range', { plugin: name, range: String(range), version: serviceVersion });
  if (!Array.isArray(r.fields)) throw refuse('fields missing');
  const fields = r.fields.map((f) => field(f, name));
  // The registry would refuse these at boot; refusing here keeps one bad plugin from stopping the service.
  const keys = fields.flatMap((f) => [f.key, ...(f.aliases ?? [])]);
  if (new Set(keys).size !== keys.length) throw refuse('duplicate field key');
  if (fields.filter((f) => f.root).length > 1) throw refuse('more than one root field');
  const declared = (r.capabilities ?? {}) as Record<string, unknown>;
  const capabilities: DriverCapabilities = {
    read: true,
    // A plugin that cannot write says so (`write: false`): its storages are read-only by themselves.
    write: declared.write !== false,
    presign: false,
    multipart: false,
    presigned_multipart: false,
    watch: false,
    move: false,
    copy: false,
    walk: false,
    ranges: false,
    etag: false,
  };
  for (const c of CARRIED) capabilities[c] = declared[c] === true;
  const maxName = Number(r.max_name_bytes);
  return {
    name,
    version: typeof r.version === 'string' ? r.version : '0.0.0',
    descriptor: {
      driver: `plugin:${name}`,
      label: typeof r.label === 'string' ? r.label : name,
      i18n_key: `storage.driver.plugin.${name}`,
      capabilities,
      fields,
      ...(Number.isInteger(maxName) && maxName > 0 ? { max_name_bytes: maxName } : {}),
    },
  };
}
