/**
 * The small part of semver a manifest's `filex_range` needs (no package added):
 * `1.2.3`, `=`, `>`, `>=`, `<`, `<=`, `^`, `~`, `x`/`*` wildcards (`1.x`, `1.2.*`),
 * space-separated ANDs and `||` ORs. Pre-release tags are compared as plain
 * versions after their core (enough for our own release numbers).
 */
type V = [number, number, number];

const parseVersion = (s: string): V | null => {
  const m = /^v?(\d+)\.(\d+)\.(\d+)(?:[-+].*)?$/.exec(s.trim());
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null;
};
const cmp = (a: V, b: V) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

/** One comparator as a predicate, or null when it does not parse. */
function comparator(c: string): ((v: V) => boolean) | null {
  const m = /^(\^|~|>=|<=|>|<|=)?v?(\d+|[xX*])(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?(?:-[0-9A-Za-z.-]+)?$/.exec(c);
  if (!m) return null;
  const op = m[1] ?? '';
  const parts = [m[2], m[3], m[4]];
  const wild = parts.findIndex((p) => p === undefined || /^[xX*]$/.test(p));
  const n = parts.map((p) => (p === undefined || /^[xX*]$/.test(p) ? 0 : Number(p))) as V;
  if (wild === 0) return op === '' || op === '=' || op === '>=' || op === '<=' ? () => true : null;
  if (wild > 0) {
    // A partial version is the range of everything it names: 1.x = >=1.0.0 <2.0.0.
    const upper: V = wild === 1 ? [n[0] + 1, 0, 0] : [n[0], n[1] + 1, 0];
    if (op === '' || op === '=' || op === '^' || op === '~') {
      const up: V = op === '^' && wild === 2 && n[0] === 0 ? [0, n[1] + 1, 0] : op === '^' ? [n[0] + 1, 0, 0] : upper;
      return (v) => cmp(v, n) >= 0 && cmp(v, up) < 0;
    }
    if (op === '>=') return (v) => cmp(v, n) >= 0;
    if (op === '<') return (v) => cmp(v, n) < 0;
    if (op === '>') return (v) => cmp(v, upper) >= 0;
    if (op === '<=') return (v) => cmp(v, upper) < 0;
  }
  switch (op) {
    case '': case '=': return (v) => cmp(v, n) === 0;
    case '>': return (v) => cmp(v, n) > 0;
    case '>=': return (v) => cmp(v, n) >= 0;
    case '<': return (v) => cmp(v, n) < 0;
    case '<=': return (v) => cmp(v, n) <= 0;
    case '~': return (v) => cmp(v, n) >= 0 && cmp(v, [n[0], n[1] + 1, 0]) < 0;
    case '^': {
      const up: V = n[0] > 0 ? [n[0] + 1, 0, 0] : n[1] > 0 ? [0, n[1] + 1, 0] : [0, 0, n[2] + 1];
      return (v) => cmp(v, n) >= 0 && cmp(v, up) < 0;
    }
  }
  return null;
}

/** The range as a predicate over versions, or null when it does not parse. */
export function parseRange(range: string): ((version: string) => boolean) | null {
  if (typeof range !== 'string' || range.length > 256 || !range.trim()) return null;
  const alternatives: ((v: V) => boolean)[][] = [];
  for (const alt of range.split('||')) {
    // ">= 1.2.0" → ">=1.2.0": an operator may be followed by spaces.
    const parts = alt.trim().replace(/(>=|<=|>|<|=|\^|~)\s+/g, '$1').split(/\s+/).filter(Boolean);
    if (!parts.length) return null;
    const preds = parts.map(comparator);
    if (preds.some((p) => p === null)) return null;
    alternatives.push(preds as ((v: V) => boolean)[]);
  }
  return (version) => {
    const v = parseVersion(version);
    return !!v && alternatives.some((all) => all.every((p) => p(v)));
  };
}

export const satisfies = (version: string, range: string): boolean => parseRange(range)?.(version) ?? false;

/** Orders two versions by their core (`x.y.z`): negative, zero or positive; NaN when one does not parse. */
export function compareVersions(a: string, b: string): number {
  const x = parseVersion(a), y = parseVersion(b);
  return x && y ? cmp(x, y) : NaN;
}
