/**
 * `smb` driver module: descriptor, config checks and factory. The transport is
 * Debian's smbclient (no npm SMB client works against a default Samba); see
 * docs/drivers/smb.md for its costs and limits.
 */
import { join } from 'node:path';
import { AppError } from '../../../errors';
import { cleanRel } from '../../../lib/paths';
import type { DriverContext, DriverDescriptor, DriverModule } from '../../types';
import { SmbClient, type SmbTimeouts } from './client';
import { SmbDriver } from './driver';
import { checkSmbPath } from './names';

const field = (key: string, label: string) => ({ key, label, i18n_key: `storage.smb.${key}` });

export const smbDescriptor: DriverDescriptor = {
  driver: 'smb',
  label: 'SMB / Windows share',
  i18n_key: 'storage.driver.smb',
  capabilities: {
    read: true,
    write: true,
    presign: false,
    multipart: false,
    presigned_multipart: false,
    move: true,
    copy: false,
    walk: true,
    watch: false,
    ranges: true,
    etag: false,
  },
  fields: [
    { ...field('host', 'Host'), type: 'string', required: true, placeholder: 'nas.local' },
    // The share is the root-guard field: it is the export the server's admin chose, never a filesystem root,
    // while `root` stays optional as the spec has it.
    { ...field('share', 'Share'), type: 'string', required: true, root: true, placeholder: 'files', help: 'The share name alone, without slashes.' },
    { ...field('user', 'User'), type: 'string', required: true, aliases: ['username'] },
    { ...field('password', 'Password'), type: 'password', required: true, secret: true },
    { ...field('root', 'Folder'), type: 'string', aliases: ['path', 'base_path'], help: 'Sub-folder of the share; empty for the whole share.' },
    { ...field('port', 'Port'), type: 'int', default: 445 },
    { ...field('domain', 'Domain'), type: 'string', default: 'WORKGROUP' },
  ],
  max_name_bytes: 255,
};

export const DEFAULT_TIMEOUTS: SmbTimeouts = { commandMs: 30_000, idleMs: 60_000 };

interface SmbConfig {
  host: string;
  share: string;
  user: string;
  password: string;
  root: string;
  port: number;
  domain: string;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v));

/** Problems with a config as [{field, message}]; empty when valid. */
export function validateSmbConfig(config: Record<string, unknown>): Array<{ field: string; message: string }> {
  const problems: Array<{ field: string; message: string }> = [];
  const need = (key: string, ok: boolean, message: string) => ok || problems.push({ field: key, message });
  const host = str(config.host);
  need('host', /^[A-Za-z0-9.:_-]+$/.test(host), 'a host name or IP address');
  need('share', /^[^\\/";*?<>:|\s][^\\/";*?<>:|]*$/.test(str(config.share)), 'the share name alone');
  // The auth file is line-based: a line break would smuggle in another setting.
  for (const key of ['user', 'password', 'domain'] as const) need(key, !/[\r\n]/.test(str(config[key])), 'no line breaks');
  need('user', str(config.user) !== '', 'required');
  need('password', typeof config.password === 'string', 'required');
  const port = config.port === undefined || config.port === '' ? 445 : Number(config.port);
  need('port', Number.isInteger(port) && port > 0 && port < 65536, 'a port number');
  try {
    checkSmbPath(cleanRel(str(config.root)));
  } catch (e) {
    need('root', false, e instanceof AppError ? e.code : 'not a folder path');
  }
  return problems;
}

function parse(config: Record<string, unknown>): SmbConfig {
  const problems = validateSmbConfig(config);
  if (problems.length > 0) throw new AppError('validation_failed', { field: problems[0].field, reason: problems[0].message }, { field: problems[0].field });
  return {
    host: str(config.host),
    share: str(config.share),
    user: str(config.user),
    password: str(config.password),
    root: cleanRel(str(config.root)),
    port: config.port === undefined || config.port === '' ? 445 : Number(config.port),
    domain: str(config.domain) || 'WORKGROUP',
  };
}

/**
 * Builds a driver without touching the network. The auth file lives in the
 * driver's state dir, named by the storage uid, mode 0600.
 */
export function createSmbDriver(config: Record<string, unknown>, ctx: DriverContext, timeouts: SmbTimeouts = DEFAULT_TIMEOUTS): SmbDriver {
  const c = parse(config);
  const client = new SmbClient(c, join(ctx.stateDir, 'smb', `${ctx.uid}.auth`), timeouts);
  return new SmbDriver(client, c.root);
}

export const smbDriver: DriverModule = {
  descriptor: smbDescriptor,
  validate: validateSmbConfig,
  create: (config, ctx) => createSmbDriver(config, ctx),
};
