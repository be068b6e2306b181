/**
 * Entries as SFTP attributes and `ls -l` lines. The tree has no owners or
 * modes: folders show as 0755 and files as 0644 owned by the signed-in user
 * (what the user may really do is decided per request by the file service).
 */
import type { Attributes, FileEntry } from 'ssh2';
import type { GatewayEntry } from '../index';

const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const HALF_YEAR_MS = 182 * 86_400_000;

/** The attributes of an entry (times in whole seconds). */
export function attrsOf(e: GatewayEntry): Attributes {
  const t = Math.floor(e.mtime / 1000);
  return { mode: e.type === 'dir' ? S_IFDIR | 0o755 : S_IFREG | 0o644, uid: 0, gid: 0, size: e.type === 'dir' ? 0 : e.size, atime: t, mtime: t };
}

/** A READDIR name with its `ls -l` style long name, which clients such as OpenSSH's `ls -l` print as is. */
export function nameOf(e: GatewayEntry, owner: string, now = Date.now()): FileEntry {
  const d = new Date(e.mtime);
  const day = `${MONTHS[d.getUTCMonth()]} ${String(d.getUTCDate()).padStart(2, ' ')}`;
  const clock = Math.abs(now - e.mtime) < HALF_YEAR_MS ? `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}` : ` ${d.getUTCFullYear()}`;
  const who = owner.replace(/\s+/g, '_').slice(0, 16) || 'filedock';
  const perms = e.type === 'dir' ? 'drwxr-xr-x' : '-rw-r--r--';
  const size = String(e.type === 'dir' ? 0 : e.size).padStart(10, ' ');
  return { filename: e.name, longname: `${perms} 1 ${who} ${who} ${size} ${day} ${clock} ${e.name}`, attrs: attrsOf(e) };
}

const pad = (n: number) => String(n).padStart(2, '0');
