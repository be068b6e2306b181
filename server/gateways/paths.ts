/**
 * Protocol paths to tree paths, for every gateway in one place. A gateway
 * path is POSIX-like; the result is a UI path (`/<storage name or uid>/<rel>`,
 * or `/`), which the file service then checks name by name (lib/paths).
 *   - `resolve` (SFTP, FTP: clients keep a working folder): relative paths
 *     join `cwd`; `.` and `..` are resolved and never climb above `/`, the
 *     virtual root that lists the caller's storages;
 *   - `refuse` (WebDAV, S3: a URL or key names one item): a `..` segment is
 *     `bad_path`.
 * Both refuse NUL and backslashes (`bad_path`): a backslash is a separator to
 * a Windows client and a name character to the storage, so neither reading
 * is safe. Percent-decoding belongs to the protocol that encodes (WebDAV, S3)
 * and happens before this; an encoded `%2e%2e` is `..` by then.
 */
import { AppError } from '../errors';

export type Dots = 'resolve' | 'refuse';

export function treePath(raw: string, o: { cwd?: string; dots: Dots }): string {
  if (typeof raw !== 'string' || raw.length > 8192) throw new AppError('bad_path');
  if (raw.includes('\0')) throw new AppError('bad_path', {}, { reason: 'nul' });
  if (raw.includes('\\')) throw new AppError('bad_path', {}, { reason: 'backslash' });
  const start = raw.startsWith('/') || o.cwd === undefined ? [] : split(o.cwd);
  const out = [...start];
  for (const seg of raw.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (o.dots === 'refuse') throw new AppError('bad_path', {}, { reason: 'traversal' });
      out.pop();
      continue;
    }
    out.push(seg);
  }
  return '/' + out.join('/');
}

const split = (p: string): string[] => p.split('/').filter((s) => s !== '' && s !== '.');

/** The parent folder and the last name of a tree path (`/` has neither). */
export function splitLast(path: string): { parent: string; name: string } {
  const i = path.lastIndexOf('/');
  return { parent: i <= 0 ? '/' : path.slice(0, i), name: path.slice(i + 1) };
}
