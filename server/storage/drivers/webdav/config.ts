/**
 * The webdav driver's descriptor fields and the typed config read from them.
 * docs/drivers/webdav.md explains each key.
 */
import type { DriverField } from '../../types';
import { parseRemoteConfig, rootField, trustFields, type RemoteCommon } from '../remote/config';
import { str, type Config, type Problem } from '../remote/options';

export const WEBDAV_FIELDS: DriverField[] = [
  {
    key: 'url',
    type: 'string',
    required: true,
    label: 'Server URL',
    i18n_key: 'storage.webdav.url',
    placeholder: 'https://nas.local/dav',
    aliases: ['endpoint'],
    help: 'http:// or https:// address of the WebDAV server, with its path prefix if any.',
  },
  rootField('webdav', '/files/team', 'Sub-folder below the URL that becomes the storage root; created when missing.'),
  { key: 'username', type: 'string', label: 'User name', i18n_key: 'storage.webdav.username', aliases: ['user'] },
  { key: 'password', type: 'password', secret: true, label: 'Password', i18n_key: 'storage.webdav.password' },
  ...trustFields('webdav'),
];

export interface WebdavConfig extends RemoteCommon {
  /** Server URL without a trailing slash. */
  url: string;
  /** Absolute path of the storage root below the URL's path, e.g. `/files/team`. */
  root: string;
  username?: string;
  password?: string;
}

/** Reads and checks the config; every problem is listed, not just the first. */
export function parseWebdavConfig(input: Config): { config: WebdavConfig } | { problems: Problem[] } {
  const parsed = parseRemoteConfig(input, WEBDAV_FIELDS, (c, problems) => {
    const url = serverUrl(str(c, 'url'));
    if (!url) {
      problems.push({ field: 'url', message: 'must be an http:// or https:// URL without credentials in it' });
      return undefined;
    }
    return {
      url: url.href.replace(/\/+$/, ''),
      username: str(c, 'username'),
      password: typeof c.password === 'string' && c.password !== '' ? c.password : undefined,
    };
  });
  if ('problems' in parsed) return parsed;
  const { config } = parsed;
  // Relative and absolute spellings mean the same here: both sit below the URL.
  return { config: { ...config, root: config.root.startsWith('/') ? config.root : `/${config.root}` } };
}

/** `url` when it is an http(s) URL without credentials in it, else undefined. */
function serverUrl(url: string | undefined): URL | undefined {
  if (url === undefined || !URL.canParse(url)) return undefined;
  const parsed = new URL(url);
  return /^https?:$/.test(parsed.protocol) && !parsed.username && !parsed.password ? parsed : undefined;
}
