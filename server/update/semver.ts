/**
 * Release versions are plain `x.y.z` (spec, Versioning 1). No pre-release or
 * build suffixes: a manifest naming one is refused when it is validated.
 * Parsing and ordering are npm's `semver`; this module only narrows it to
 * release versions.
 */
// Only the functions used, not semver's index: it loads every function and range module at start (docs/benchmarks.md, "A lean start").
import compare from 'semver/functions/compare.js';
import parse from 'semver/functions/parse.js';
import type SemVer from 'semver/classes/semver.js';
import type { MoveKind } from '../contract';

export interface Version {
  major: number;
  minor: number;
  patch: number;
}

/** Which part moved between two versions; `none` when the target is not newer. */
export type { MoveKind } from '../contract';

/** Parses `x.y.z` (a leading `v` is tolerated); null for anything else. */
export function parseVersion(text: string): Version | null {
  const v = release(text);
  return v && { major: v.major, minor: v.minor, patch: v.patch };
}

/** semver also takes `=1.2.3` and suffixes; a release is `x.y.z` or `vx.y.z` only. */
function release(text: string): SemVer | null {
  const v = /^v?\d/.test(text.trim()) ? parse(text.trim()) : null;
  return v && v.prerelease.length === 0 && v.build.length === 0 ? v : null;
}

export const isVersion = (text: string): boolean => parseVersion(text) !== null;

/** Negative, zero or positive like a sort comparator; throws on a malformed version. */
export function compareVersions(a: string, b: string): number {
  return compare(mustParse(a), mustParse(b));
}

/** The part that moved from `current` to `target` (spec, Versioning 3). */
export function moveKind(current: string, target: string): MoveKind {
  if (compareVersions(target, current) <= 0) return 'none';
  const c = mustParse(current);
  const t = mustParse(target);
  if (t.major !== c.major) return 'major';
  if (t.minor !== c.minor) return 'minor';
  return 'patch';
}

function mustParse(text: string): SemVer {
  const v = release(text);
  if (!v) throw new Error(`not an x.y.z version: ${JSON.stringify(text)}`);
  return v;
}
