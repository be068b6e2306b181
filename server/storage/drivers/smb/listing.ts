/**
 * Parser for smbclient's `ls` output. A row is printed as
 * `"  %-30s%7s %8.0f  %s"` (name, attributes, size, asctime), where the name
 * is padded in bytes, not characters; so the row is cut from the right in
 * bytes and whatever precedes the attribute column is the name. smbclient runs
 * with TZ=UTC, so the time reads as UTC. A recursive listing prints each folder
 * as a header line `\a\b` before its rows.
 */
import type { Entry } from '../../types';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const TAIL = / +(\d+) {2}\w{3} (\w{3}) +(\d{1,2}) (\d\d):(\d\d):(\d\d) (\d{4})$/;

/** Epoch ms of an asctime-style `Nov 21 09:38:14 2026` read as UTC. */
function utc(mon: string, day: string, h: string, m: string, s: string, year: string): number {
  return Date.UTC(Number(year), MONTHS.indexOf(mon), Number(day), Number(h), Number(m), Number(s));
}

/** One listing row as an Entry, or null for anything else (totals, blank lines, `.` and `..`). */
export function parseRow(line: string): Entry | null {
  if (!line.startsWith('  ')) return null;
  const t = TAIL.exec(line);
  if (!t) return null;
  // What precedes the size is "  " + name (padded to 30 bytes) + attributes (right-aligned in 7).
  const head = Buffer.from(line.slice(0, t.index), 'utf8');
  if (head.length < 2 + 7) return null;
  const attrs = head
    .subarray(head.length - 7)
    .toString('latin1')
    .trim();
  if (!/^[A-Z]+$/.test(attrs)) return null;
  let nameBytes = head.subarray(2, head.length - 7);
  // Names shorter than 30 bytes were padded with spaces; SMB names never end with a space.
  if (nameBytes.length <= 30) nameBytes = nameBytes.subarray(0, lastNonSpace(nameBytes) + 1);
  const name = nameBytes.toString('utf8');
  if (name === '' || name === '.' || name === '..') return null;
  const dir = attrs.includes('D');
  return { name, type: dir ? 'dir' : 'file', size: dir ? 0 : Number(t[1]), mtime: utc(t[2], t[3], t[4], t[5], t[6], t[7]) };
}

function lastNonSpace(b: Buffer): number {
  let i = b.length - 1;
  while (i >= 0 && b[i] === 0x20) i--;
  return i;
}

/** Rows of a flat listing. */
export function parseListing(output: string): Entry[] {
  const out: Entry[] = [];
  for (const line of output.split('\n')) {
    const e = parseRow(line);
    if (e) out.push(e);
  }
  return out;
}

/**
 * Rows of a recursive listing with the share-relative folder each row sits in
 * (POSIX form, '' for the share root).
 */
export function parseRecursive(output: string): Array<{ dir: string; entry: Entry }> {
  const out: Array<{ dir: string; entry: Entry }> = [];
  let dir = '';
  for (const line of output.split('\n')) {
    if (line.startsWith('\\')) {
      dir = line.slice(1).replace(/\\/g, '/');
      continue;
    }
    const e = parseRow(line);
    if (e) out.push({ dir, entry: e });
  }
  return out;
}
