/**
 * The webdav driver's descriptor fields and the typed config read from them.
 * docs/drivers/webdav.md explains each key.
 */
import type { DriverField } from '../../types';
import { remoteRoot, str, timeoutMs, tlsTrust, withAliases, type Config, type Problem, type TlsTrust } from './remote-options';

export const WEBDAV_FIELDS: DriverField[] = [
  {
    key: 'url', type: 'string', required: true, label: 'Server URL', i18n_key: 'storage.webdav.url',
    placeholder: 'https://nas.local/dav', aliases: ['endpoint'],
    help: 'http:// or https:// address of the WebDAV server, with its path prefix if any.',
  },
  {
    key: 'root', type: 'string', required: true, root: true, label: 'Folder', i18n_key: 'storage.webdav.root',
    placeholder: '/files/team', aliases: ['base_path', 'remote_path'],
    help: 'Sub-folder below the URL that becomes the storage root; created when missing.',
  },
  { key: 'username', type: 'string', label: 'User name', i18n_key: 'storage.webdav.username', aliases: ['user'] },
  { key: 'password', type: 'password', secret: true, label: 'Password', i18n_key: 'storage.webdav.password' },
  {
    key: 'tls_fingerprint', type: 'string', label: 'Pinned certificate (SHA-256)', i18n_key: 'storage.webdav.tls_fingerprint',
    placeholder: 'AB:CD:…', help: 'Trust exactly this certificate instead of the system authorities.',
  },
  {
    key: 'allow_self_signed', type: 'bool', default: false, label: 'Accept any self-signed certificate',
    i18n_key: 'storage.webdav.allow_self_signed', help: 'Insecure: prefer pinning the fingerprint.',
  },
  { key: 'timeout_s', type: 'int', default: 30, label: 'Timeout (seconds)', i18n_key: 'storage.webdav.timeout_s' },
];

export interface WebdavConfig {
  /** Server URL without a trailing slash. */
  url: string;
  /** Absolute path of the storage root below the URL's path, e.g. `/files/team`. */
  root: string;
  username?: string;
  password?: string;
  trust: TlsTrust;
  timeoutMs: number;
}

/** Reads and checks the config; every problem is listed, not just the first. */
export function parseWebdavConfig(input: Config): { config: WebdavConfig } | { problems: Problem[] } {
  const c = withAliases(input, WEBDAV_FIELDS);
  const problems: Problem[] = [];
  const url = str(c, 'url');
  let parsed: URL | undefined;
  try {
    parsed = url ? new URL(url) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!parsed || !/^https?:$/.test(parsed.protocol) || parsed.username || parsed.password)
    problems.push({ field: 'url', message: 'must be an http:// or https:// URL without credentials in it' });
  const root = remoteRoot(str(c, 'root'));
  if ('problem' in root) problems.push({ field: 'root', message: root.problem });
  const timeout = timeoutMs(c);
  if ('problem' in timeout) problems.push({ field: 'timeout_s', message: timeout.problem });
  const trust = tlsTrust(c);
  if ('problem' in trust) problems.push(trust.problem);
  if (problems.length > 0 || !parsed || 'problem' in root || 'problem' in timeout || 'problem' in trust) return { problems };
  return {
    config: {
      url: parsed.href.replace(/\/+$/, ''),
      // Relative and absolute spellings mean the same here: both sit below the URL.
      root: root.root.startsWith('/') ? root.root : `/${root.root}`,
      username: str(c, 'username'),
      password: typeof c.password === 'string' && c.password !== '' ? c.password : undefined,
      trust: trust.trust,
      timeoutMs: timeout.ms,
    },
  };
}
