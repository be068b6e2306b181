/**
 * What the service may do on its own (spec, Versioning 2-4). Pure functions
 * of the manifest, the running version and the clock, so every rule is tested
 * without a network or a file system.
 */
import type { AutoBlock, UpdatePolicy } from '../contract';
import { AppError } from '../errors';
import { assetFor, type Release } from './manifest';
import { compareVersions, moveKind, parseVersion, type MoveKind } from './semver';

export type { UpdatePolicy };

/** Why an automatic upgrade is not happening; shown in the status as they are. */
export type { AutoBlock };

/** `AUTO_UPGRADE=true` selects `patch`; an explicit policy always wins; the default is `manual`. */
export function resolvePolicy(explicit: UpdatePolicy | '', autoUpgrade: boolean): UpdatePolicy {
  if (explicit) return explicit;
  return autoUpgrade ? 'patch' : 'manual';
}

/** A daily window in minutes after local midnight; `end < start` wraps past midnight. */
export interface DailyWindow {
  start: number;
  end: number;
}

/** Parses `HH:MM-HH:MM`; '' means no window (null); anything else is `validation_failed`. */
export function parseWindow(text: string): DailyWindow | null {
  if (text.trim() === '') return null;
  const m = /^([01]\d|2[0-3]):([0-5]\d)-([01]\d|2[0-3]):([0-5]\d)$/.exec(text.trim());
  if (!m) throw new AppError('validation_failed', { field: 'SERVICE_UPDATE_WINDOW', reason: 'must look like 03:00-05:00' });
  const start = Number(m[1]) * 60 + Number(m[2]);
  const end = Number(m[3]) * 60 + Number(m[4]);
  if (start === end) throw new AppError('validation_failed', { field: 'SERVICE_UPDATE_WINDOW', reason: 'start and end are equal' });
  return { start, end };
}

/** Whether `at` (server local time) lies inside the window; start inclusive, end exclusive. */
export function inWindow(w: DailyWindow, at: Date): boolean {
  const t = at.getHours() * 60 + at.getMinutes();
  return w.start < w.end ? t >= w.start && t < w.end : t >= w.start || t < w.end;
}

export interface PlanInput {
  current: string;
  releases: Release[];
  policy: UpdatePolicy;
  os: string;
  arch: string;
  /** False when the install port fetches from its own feed (desktop): no manifest asset is needed. */
  needsAsset: boolean;
  /** The install can replace its own binary (not a container, not a source checkout). */
  selfReplaceable: boolean;
  window: DailyWindow | null;
  now: Date;
  /** Long ops are running (the automatic upgrade would cut them). */
  busy?: boolean;
}

export interface Plan {
  /** Newest release above the running version, whatever part moved; what gets announced. */
  latest: Release | null;
  latestKind: MoveKind;
  /** What a manual apply installs when no version is named: newest installable non-major release. */
  candidate: Release | null;
  /** Release the policy would install automatically, and everything standing in its way. */
  auto: { target: Release | null; blockedBy: AutoBlock[] };
}

/** Whether this build can move from `current` straight to `release` (`min_version` met, an asset for us when needed). */
function installable(p: PlanInput, release: Release): boolean {
  if (release.min_version && compareVersions(p.current, release.min_version) < 0) return false;
  return !p.needsAsset || assetFor(release, p.os, p.arch) !== null;
}

/** Applies the spec's rules to a validated, ascending release list. */
export function planUpdate(p: PlanInput): Plan {
  const newer = p.releases.filter((r) => compareVersions(r.version, p.current) > 0);
  const latest = newer.at(-1) ?? null;
  const usable = newer.filter((r) => installable(p, r));
  const candidate = usable.filter((r) => moveKind(p.current, r.version) !== 'major').at(-1) ?? null;

  const onZero = parseVersion(p.current)?.major === 0;
  const kinds: MoveKind[] = p.policy === 'minor' && !onZero ? ['patch', 'minor'] : p.policy === 'patch' || p.policy === 'minor' ? ['patch'] : [];
  const target = usable.filter((r) => kinds.includes(moveKind(p.current, r.version))).at(-1) ?? null;

  const blockedBy: AutoBlock[] = [];
  if (kinds.length === 0) blockedBy.push('policy');
  if (p.policy === 'minor' && onZero && usable.some((r) => moveKind(p.current, r.version) === 'minor')) blockedBy.push('zero_major');
  if (target) {
    if (!target.auto_ok) blockedBy.push('not_auto_ok');
    // The target and every release it jumps over: a skipped migration is still a migration.
    if (newer.some((r) => r.migrations && compareVersions(r.version, target.version) <= 0)) blockedBy.push('migrations');
    if (!p.selfReplaceable) blockedBy.push('install_mode');
    if (p.window && !inWindow(p.window, p.now)) blockedBy.push('window');
    if (p.busy) blockedBy.push('busy');
  }
  return { latest, latestKind: latest ? moveKind(p.current, latest.version) : 'none', candidate, auto: { target: kinds.length ? target : null, blockedBy } };
}
