/**
 * Modification times from a Unix-style LIST line, the only time a server
 * without MLSD gives for folders. `ls` prints `Mon DD HH:MM` for the last six
 * months and `Mon DD  YYYY` before that; servers print it in UTC by default.
 */
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
/** A yearless date further ahead than this belongs to last year. */
const FUTURE_SLACK_MS = 2 * 86_400_000;

/** Epoch ms of a LIST date such as `Nov 21 09:43` or `Nov 21 2025` (UTC), or 0 when unreadable. */
export function parseListTime(raw: string, now = Date.now()): number {
  const m = /^([A-Za-z]{3})\s+(\d{1,2})\s+(?:(\d{1,2}):(\d{2})|(\d{4}))$/.exec(raw.trim());
  if (!m) return 0;
  const month = MONTHS.indexOf(m[1].toLowerCase());
  if (month < 0) return 0;
  const day = Number(m[2]);
  if (m[5]) return Date.UTC(Number(m[5]), month, day);
  const year = new Date(now).getUTCFullYear();
  const at = (y: number) => Date.UTC(y, month, day, Number(m[3]), Number(m[4]));
  return at(year) > now + FUTURE_SLACK_MS ? at(year - 1) : at(year);
}
