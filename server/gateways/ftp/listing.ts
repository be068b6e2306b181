/**
 * Listing lines: `LIST` in the `ls -l` form every client parses, `NLST` names,
 * and RFC 3659 facts for `MLSD` / `MLST`. Times are UTC. A name holding CR or
 * LF cannot be written on a line-based listing and is left out (it could
 * otherwise forge entries).
 */
import type { GatewayEntry } from '..';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const HALF_YEAR_MS = 182 * 86_400_000;

/** False for names no line-based listing can carry. */
export const listable = (name: string): boolean => !/[\r\n]/.test(name);

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** `YYYYMMDDHHMMSS` in UTC (MDTM, MLSD `modify`). */
export function ftpTime(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}${pad(d.getUTCSeconds())}`;
}

/** One `ls -l` line: the time of day for the last half year, else the year. */
export function listLine(e: GatewayEntry, now = Date.now()): string {
  const d = new Date(e.mtime);
  const recent = Math.abs(now - e.mtime) < HALF_YEAR_MS;
  const when = `${MONTHS[d.getUTCMonth()]} ${String(d.getUTCDate()).padStart(2)} ${recent ? `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}` : String(d.getUTCFullYear()).padStart(5)}`;
  const mode = e.type === 'dir' ? 'drwxr-xr-x' : '-rw-r--r--';
  return `${mode} 1 filedock filedock ${String(e.size).padStart(12)} ${when} ${e.name}`;
}

/** The MLSD / MLST facts of an entry, then a space and the name. */
export function factsLine(e: GatewayEntry, name = e.name): string {
  const facts = e.type === 'dir' ? 'type=dir;perm=elcmfd;' : `type=file;size=${e.size};perm=radfw;`;
  return `${facts}modify=${ftpTime(e.mtime)}; ${name}`;
}
