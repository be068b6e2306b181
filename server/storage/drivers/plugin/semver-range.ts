/**
 * The subset of npm semver ranges a plugin's `service_range` may use:
 * comparators (`>=1.2.0`, `<2`, `=1.0.0`, a bare version), caret and tilde
 * (`^0.3.1`, `~1.4`), `x`/`*` wildcards, spaces for AND and `||` for OR.
 * Pre-release tags are ignored. An unreadable range satisfies nothing.
 */
type Version = [number, number, number];

function parse(text: string): Version | null {
  const m = /^v?(\d+)(?:\.(\d+|x|\*))?(?:\.(\d+|x|\*))?(?:[-+].*)?$/.exec(text);
  if (!m) return null;
  const part = (s: string | undefined) => (s === undefined || s === 'x' || s === '*' ? 0 : Number(s));
  return [Number(m[1]), part(m[2]), part(m[3])];
}

/** How many leading parts a partial version names (`1` → 1, `1.2` → 2, `1.2.3` → 3). */
const precision = (text: string): number => text.replace(/^v/, '').split(/[-+]/)[0].split('.').filter((p) => p !== 'x' && p !== '*').length;

const cmp = (a: Version, b: Version): number => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

/** Upper bound (exclusive) one step above the last named part. */
function bump(v: Version, at: number): Version {
  if (at <= 0) return [v[0] + 1, 0, 0];
  if (at === 1) return [v[0], v[1] + 1, 0];
  return [v[0], v[1], v[2] + 1];
}

function comparator(token: string, v: Version): boolean | null {
  if (token === '*' || token === 'x' || token === '') return true;
  const m = /^(>=|<=|>|<|=|\^|~)?(.+)$/.exec(token);
  if (!m) return null;
  const op = m[1] ?? '';
  const base = parse(m[2]);
  if (!base) return null;
  const named = precision(m[2]);
  switch (op) {
    case '>=': return cmp(v, base) >= 0;
    case '>': return named < 3 ? cmp(v, bump(base, named - 1)) >= 0 : cmp(v, base) > 0;
    case '<': return cmp(v, base) < 0;
    case '<=': return named < 3 ? cmp(v, bump(base, named - 1)) < 0 : cmp(v, base) <= 0;
    case '^': {
      // The first non-zero part is the one that may not change.
      const at = base[0] > 0 || named === 1 ? 0 : base[1] > 0 || named === 2 ? 1 : 2;
      return cmp(v, base) >= 0 && cmp(v, bump(base, at)) < 0;
    }
    case '~': return cmp(v, base) >= 0 && cmp(v, bump(base, named >= 2 ? 1 : 0)) < 0;
    default: return named === 3 ? cmp(v, base) === 0 : cmp(v, base) >= 0 && cmp(v, bump(base, named - 1)) < 0;
  }
}

/** True when `version` lies in `range`; false for an unreadable range or version. */
export function satisfies(version: string, range: string): boolean {
  const v = parse(version.trim());
  if (!v || typeof range !== 'string' || range.trim() === '') return false;
  return range.split('||').some((alt) => {
    const tokens = alt.trim().replace(/(>=|<=|>|<|=|\^|~)\s+/g, '$1').split(/\s+/);
    const results = tokens.map((t) => comparator(t, v));
    return results.every((r) => r === true);
  });
}
