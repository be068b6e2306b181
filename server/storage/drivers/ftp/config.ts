/**
 * The ftp driver's descriptor fields and the typed config read from them.
 * docs/drivers/ftp.md explains each key.
 */
import { isIP } from 'node:net';
import type { DriverField } from '../../types';
import { parseRemoteConfig, rootField, trustFields, type RemoteCommon } from '../remote/config';
import { int, str, type Config, type Problem } from '../remote/options';

export type FtpSecure = 'explicit' | 'implicit' | 'off';
const SECURE_MODES: FtpSecure[] = ['explicit', 'implicit', 'off'];

export const FTP_FIELDS: DriverField[] = [
  { key: 'host', type: 'string', required: true, label: 'Host', i18n_key: 'storage.ftp.host', placeholder: 'nas.local' },
  {
    key: 'port',
    type: 'int',
    label: 'Port',
    i18n_key: 'storage.ftp.port',
    help: 'Default 21, or 990 with implicit TLS.',
  },
  { key: 'user', type: 'string', default: 'anonymous', label: 'User name', i18n_key: 'storage.ftp.user', aliases: ['username'] },
  { key: 'password', type: 'password', secret: true, label: 'Password', i18n_key: 'storage.ftp.password', aliases: ['pass'] },
  {
    key: 'secure',
    type: 'select',
    options: SECURE_MODES,
    default: 'explicit',
    label: 'Encryption',
    i18n_key: 'storage.ftp.secure',
    help: 'explicit: AUTH TLS on the normal port (FTPES); implicit: TLS from the first byte (FTPS, port 990); off: plain FTP.',
  },
  rootField('ftp', '/shared/team', 'Sub-folder that becomes the storage root; a relative path starts at the login folder. Created when missing.'),
  ...trustFields('ftp'),
];

export interface FtpConfig extends RemoteCommon {
  host: string;
  port: number;
  user: string;
  password: string;
  secure: FtpSecure;
  /** Absolute (`/a/b`) or relative to the login folder (`a/b`). */
  root: string;
}

/** `secure` as a mode; booleans and their spellings are accepted too (true = explicit, false = off). */
function secureMode(raw: unknown): FtpSecure | null {
  if (raw === undefined || raw === null || raw === '') return 'explicit';
  const v = String(raw).trim().toLowerCase();
  if ((SECURE_MODES as string[]).includes(v)) return v as FtpSecure;
  if (/^(true|1|yes|on)$/.test(v)) return 'explicit';
  if (/^(false|0|no|none)$/.test(v)) return 'off';
  return null;
}

/** Reads and checks the config; every problem is listed, not just the first. */
export function parseFtpConfig(input: Config): { config: FtpConfig } | { problems: Problem[] } {
  return parseRemoteConfig(input, FTP_FIELDS, (c, problems) => {
    const host = str(c, 'host');
    if (!host || (!isIP(host) && !/^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$/.test(host)))
      problems.push({ field: 'host', message: 'must be a host name or an IP address' });
    const secure = secureMode(c.secure);
    if (!secure) problems.push({ field: 'secure', message: `must be one of ${SECURE_MODES.join(', ')}` });
    const port = int(c, 'port', secure === 'implicit' ? 990 : 21);
    if (!(port >= 1 && port <= 65535)) problems.push({ field: 'port', message: 'must be an integer between 1 and 65535' });
    if (problems.length > 0 || !host || !secure) return undefined;
    return {
      host,
      port,
      user: str(c, 'user') ?? 'anonymous',
      password: typeof c.password === 'string' ? c.password : '',
      secure,
    };
  });
}
