/**
 * Release versions are plain `x.y.z` (spec, Versioning 1). No pre-release or
 * build suffixes: a manifest naming one is refused when it is validated.
 */
export interface Version {
  major: number;
  minor: number;
  patch: number;
}

/** Which part moved between two versions; `none` when the target is not newer. */
export type { MoveKind } from '../contract';
import type { MoveKind } from '../contract';

const RE = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/;

/** Parses `x.y.z` (a leading `v` is tolerated); null for anything else. */
export function parseVersion(text: string): Version | null {
  const m = RE.exec(text.trim().replace(/^v/, ''));
  return m ? { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]) } : null;
}

export const isVersion = (text: string): boolean => parseVersion(text) !== null;

/** Negative, zero or positive like a sort comparator; throws on a malformed version. */
export function compareVersions(a: string, b: string): number {
  const x = mustParse(a);
  const y = mustParse(b);
  return x.major - y.major || x.minor - y.minor || x.patch - y.patch;
}

/** The part that moved from `current` to `target` (spec, Versioning 3). */
export function moveKind(current: string, target: string): MoveKind {
  const c = mustParse(current);
  const t = mustParse(target);
  if (compareVersions(target, current) <= 0) return 'none';
  if (t.major !== c.major) return 'major';
  if (t.minor !== c.minor) return 'minor';
  return 'patch';
}

function mustParse(text: string): Version {
  const v = parseVersion(text);
  if (!v) throw new Error(`not an x.y.z version: ${JSON.stringify(text)}`);
  return v;
}
