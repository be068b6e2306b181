/**
 * Version ranges and ordering, with npm's `semver` (one implementation for
 * every caller: a storage plugin's `service_range`, an app manifest's
 * `filex_range`, app upgrades). Pre-releases follow semver's order (a
 * pre-release sits just below its release: `1.0.0-rc.1` is inside
 * `<1.0.0` and outside `^1.0.0`) and a range matches them too
 * (`includePrerelease`): a pre-release build of the service is checked like
 * the release it leads to, never waved through by dropping its tag.
 */
// Only the functions used, not semver's index: it loads every function and range module at start (docs/benchmarks.md, "A lean start").
import compare from 'semver/functions/compare.js';
import major from 'semver/functions/major.js';
import satisfiesRange from 'semver/functions/satisfies.js';
import valid from 'semver/functions/valid.js';
import validRange from 'semver/ranges/valid.js';

const OPTIONS = { includePrerelease: true } as const;
/** semver reads an empty alternative (`1.0.0 ||`) and a wildcard before a number (`^x.1`) as `*`: refused here instead. */
const LOOSE = /(^|\|\|)\s*($|\|\|)|[xX*]\.\d/;

/** The range as a predicate over versions, or null when it does not parse. */
export function parseRange(range: string): ((version: string) => boolean) | null {
  if (typeof range !== 'string' || range.length > 256 || !range.trim() || LOOSE.test(range)) return null;
  const normal = validRange(range, OPTIONS);
  if (normal === null) return null;
  return (version) => valid(version) !== null && satisfiesRange(version, normal, OPTIONS);
}

/** True when `version` lies in `range`; false for an unreadable range or version. */
export const satisfies = (version: string, range: string): boolean => parseRange(range)?.(version) ?? false;

/** Orders two versions (pre-releases below their release): negative, zero or positive; NaN when one does not parse. */
export function compareVersions(a: string, b: string): number {
  return valid(a) && valid(b) ? compare(a, b) : NaN;
}

/** True when `to` has another major version than `from` (an update that may break what the app did). */
export const crossesMajor = (from: string, to: string): boolean => major(from) !== major(to);
