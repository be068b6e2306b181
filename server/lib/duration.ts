/**
 * Durations as the spec writes them: a bare number means seconds; otherwise a
 * sequence like `1h30m`, `7d`, `900s`, `250ms`. Returns milliseconds, or null
 * when the text is not a duration.
 */
const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

export function parseDuration(input: string | number): number | null {
  if (typeof input === 'number') return Number.isFinite(input) && input >= 0 ? input * 1000 : null;
  const s = input.trim().toLowerCase();
  if (/^\d+(\.\d+)?$/.test(s)) return Number(s) * 1000;
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/gy;
  let total = 0;
  let pos = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(s))) {
    total += Number(m[1]) * UNITS[m[2]];
    pos = re.lastIndex;
  }
  return pos === s.length && pos > 0 ? total : null;
}

/** A compact rendering (`2h`, `45m`, `30s`) for messages and the `ttl` echo. */
export function formatDuration(ms: number): string {
  for (const [u, f] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const)
    if (ms >= f && ms % f === 0) return `${ms / f}${u}`;
  return `${Math.round(ms)}ms`;
}
