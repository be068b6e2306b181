/**
 * The release checker and the upgrade orchestrator. It decides (policy.ts),
 * remembers (state.ts) and hands the install to a port (bundle-port.ts or the
 * desktop shell's); it never sees HTTP, the database or the event bus, which
 * the composition root injects as plain functions.
 */
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { AppError, isAppError } from '../errors';
import { bundlePort, recoverSwap } from './bundle-port';
import { assetFor, ManifestError, parseManifest, type Release } from './manifest';
import { fetchManifestJson, FetchFailure } from './net';
import { parseWindow, planUpdate, type Plan } from './policy';
import type { InstallPhase, UpdaterPort } from './port';
import { compareVersions, moveKind } from './semver';
import { loadState, saveState, type PersistedState } from './state';
import type { ReleaseSummary, Updater, UpdaterOptions, UpdateResult, UpdateStatus } from './types';

const HOUR = 3_600_000;
/** How often the schedule wakes: checks are due every interval, but a window may open in between. */
const TICK_MS = 15 * 60_000;
/** Delay of the first check after start, so boot is never slowed by the network. */
const FIRST_CHECK_DELAY_MS = 60_000;
const PRE_COMMAND_TIMEOUT_MS = 30 * 60_000;

const refuse = (reason: string, message: string, extra: Record<string, unknown> = {}) =>
  new AppError('update_refused', { reason }, { reason, message, ...extra }, message);

/** Builds the updater; recovers an interrupted swap of a bundle install before anything else. */
export function createUpdater(opts: UpdaterOptions): Updater {
  const window = parseWindow(opts.window ?? '');
  const intervalMs = Math.max(opts.intervalMs, HOUR);
  const now = opts.now ?? (() => new Date());
  const checksOn = opts.check && opts.manifestUrl !== '';
  const port: UpdaterPort | null =
    opts.port ??
    (opts.installMode === 'binary' && opts.installRoot
      ? bundlePort({ root: opts.installRoot, downloadDir: join(opts.dataDir, 'updates'), version: opts.version, restart: opts.restart })
      : null);

  let state: PersistedState = loadState(opts.dataDir);
  let phase: InstallPhase | null = null;
  let timer: NodeJS.Timeout | null = null;
  let checking: Promise<UpdateStatus> | null = null;
  // A failed automatic upgrade is not retried by the schedule until the next start (or a manual apply).
  const autoTried = new Set<string>();

  const persist = (patch: Partial<PersistedState>) => {
    state = { ...state, ...patch };
    saveState(opts.dataDir, state);
  };
  const fail = (reason: string, message: string) => {
    persist({ lastError: { reason, message, at: now().toISOString() } });
    opts.log.warn(`update: ${message}`, { reason });
  };

  if (opts.installMode === 'binary' && opts.installRoot) {
    const recovered = recoverSwap(opts.installRoot);
    if (recovered) fail('interrupted', recovered);
  }

  /** Why an apply cannot even start on this install, or null. */
  const installRefusal = (): string | null => {
    if (opts.installMode === 'docker') return 'container';
    if (!port) return 'not_self_replaceable';
    if (!checksOn) return 'checks_disabled';
    return null;
  };

  const plan = (): Plan =>
    planUpdate({
      current: opts.version,
      releases: state.manifest?.releases ?? [],
      policy: opts.policy,
      os: opts.os,
      arch: opts.arch,
      needsAsset: port?.needsAsset ?? true,
      selfReplaceable: installRefusal() === null,
      window,
      now: now(),
      busy: opts.busy?.() ?? false,
    });

  const summary = (r: Release): ReleaseSummary => ({
    version: r.version,
    kind: moveKind(opts.version, r.version),
    date: r.date,
    severity: r.severity,
    notes: r.notes,
    notes_url: r.notes_url,
    image: r.image,
    migrations: r.migrations,
    auto_ok: r.auto_ok,
  });

  const instructions = (p: Plan): string | null => {
    if (opts.installMode === 'docker' && p.latest)
      return `Pull the new image${p.latest.image ? ` ${p.latest.image}` : ''} and recreate the container; the data volume is kept.`;
    if (p.latestKind === 'major' && p.latest)
      return `Version ${p.latest.version} is a major release: read ${p.latest.notes_url || 'its release notes'}, back up the data folder, then install it by hand (docs/updates.md).`;
    return null;
  };

  const status = (): UpdateStatus => {
    const p = plan();
    return {
      current_version: opts.version,
      install_mode: opts.installMode,
      channel: opts.channel,
      policy: opts.policy,
      check_enabled: checksOn,
      checked_at: state.checkedAt,
      last_error: state.lastError,
      latest: p.latest ? summary(p.latest) : null,
      update_available: p.latest !== null,
      candidate: p.candidate?.version ?? null,
      apply_refusal: installRefusal() ?? (phase ? 'in_progress' : null),
      auto: { target: p.auto.target?.version ?? null, blocked_by: p.auto.blockedBy },
      instructions: instructions(p),
      in_progress: phase,
      last_applied: state.lastApplied && { ...state.lastApplied, restart_required: state.lastApplied.restartRequired },
    };
  };

  /** Announces the newest release once per version; a security release is a warning. */
  const announce = () => {
    const p = plan();
    if (!p.latest || state.announced.includes(p.latest.version) || opts.policy === 'off') return;
    const r = p.latest;
    persist({ announced: [...state.announced, r.version].slice(-50) });
    opts.emit('update_available', {
      version: r.version,
      severity: r.severity === 'security' ? 'warning' : 'info',
      kind: p.latestKind,
      ...(r.notes ? { notes: r.notes } : {}),
      ...(r.notes_url ? { notes_url: r.notes_url } : {}),
    });
  };

  const fetchOnce = async (): Promise<UpdateStatus> => {
    try {
      const body = await fetchManifestJson(opts.manifestUrl, opts.version);
      const manifest = parseManifest(body, opts.manifestUrl);
      if (manifest.channel !== opts.channel) throw new ManifestError(`manifest is for channel ${manifest.channel}, not ${opts.channel}`);
      persist({ manifest, checkedAt: now().toISOString(), lastError: null });
      announce();
    } catch (e) {
      persist({ checkedAt: now().toISOString() });
      if (e instanceof ManifestError) fail('manifest_invalid', e.message);
      else if (e instanceof FetchFailure) fail(e.reason === 'manifest_invalid' ? 'manifest_invalid' : 'network', e.message);
      else fail('internal', (e as Error).message);
    }
    return status();
  };

  const check = (): Promise<UpdateStatus> => {
    if (!checksOn) return Promise.resolve(status());
    checking ??= fetchOnce().finally(() => (checking = null));
    return checking;
  };

  const snapshot = async (from: string, to: string) => {
    if (opts.preCommand) {
      const code = await runShell(opts.preCommand, { FILEDOCK_UPDATE_FROM: from, FILEDOCK_UPDATE_TO: to, FILEDOCK_DATA_DIR: opts.dataDir });
      if (code !== 0) throw refuse('snapshot_failed', `SERVICE_UPDATE_PRE_COMMAND exited with ${code}`);
      return;
    }
    const dir = join(opts.dataDir, 'backups');
    mkdirSync(dir, { recursive: true });
    const dest = join(dir, `pre-update-${from}-to-${to}-${now().toISOString().replace(/[:.]/g, '-')}`);
    try {
      await opts.snapshotDb(dest);
    } catch (e) {
      throw refuse('snapshot_failed', `database snapshot failed: ${(e as Error).message}`);
    }
  };

  /** Picks the release an apply installs, or throws the refusal. */
  const chooseTarget = (version: string | undefined): Release => {
    const p = plan();
    const releases = state.manifest?.releases ?? [];
    const r = version === undefined ? p.candidate : releases.find((x) => x.version === version.replace(/^v/, ''));
    if (!r) {
      if (version !== undefined) throw refuse('unknown_version', `version ${version} is not in the ${opts.channel} manifest`);
      if (p.latestKind === 'major') throw refuse('major_upgrade', instructions(p) ?? 'major release', { version: p.latest?.version });
      if (p.latest) throw refuse('no_asset', `no release above ${opts.version} can be installed on ${opts.os}/${opts.arch}`);
      throw refuse('up_to_date', `${opts.version} is the newest release`);
    }
    if (compareVersions(r.version, opts.version) <= 0) throw refuse('not_newer', `${r.version} is not newer than ${opts.version}`);
    if (moveKind(opts.version, r.version) === 'major')
      throw refuse('major_upgrade', instructions({ ...p, latest: r, latestKind: 'major' }) ?? '', { version: r.version });
    if (r.min_version && compareVersions(opts.version, r.min_version) < 0)
      throw refuse('min_version', `${r.version} needs at least ${r.min_version}; upgrade to that first`);
    if ((port?.needsAsset ?? true) && !assetFor(r, opts.os, opts.arch)) throw refuse('no_asset', `${r.version} has no asset for ${opts.os}/${opts.arch}`);
    return r;
  };

  const apply = async (version?: string): Promise<UpdateResult> => {
    const refusal = installRefusal();
    if (refusal === 'container') throw refuse('container', instructions(plan()) ?? 'Container installs are upgraded by pulling a new image.');
    if (refusal || !port) throw refuse(refusal ?? 'not_self_replaceable', `this install cannot upgrade itself (${refusal})`);
    if (phase) throw refuse('in_progress', `an upgrade is already running (${phase})`);
    phase = 'downloading';
    try {
      if (!state.manifest || (version !== undefined && !state.manifest.releases.some((r) => r.version === version))) await fetchOnce();
      const target = chooseTarget(version);
      opts.log.info(`update: installing ${target.version} over ${opts.version}`);
      const outcome = await port.install(
        { from: opts.version, version: target.version, asset: assetFor(target, opts.os, opts.arch) },
        { beforeSwap: () => snapshot(opts.version, target.version), onPhase: (x) => (phase = x) },
      );
      const at = now().toISOString();
      persist({ lastApplied: { from: opts.version, to: target.version, at, restartRequired: outcome.restartRequired }, lastError: null });
      opts.emit('update_applied', { from: opts.version, to: target.version, restart_required: outcome.restartRequired });
      return { from: opts.version, to: target.version, restart_required: outcome.restartRequired, status: status() };
    } catch (e) {
      const reason = isAppError(e) ? String(e.params.reason ?? e.code) : 'internal';
      fail(reason, isAppError(e) && typeof e.details?.message === 'string' ? e.details.message : (e as Error).message);
      throw isAppError(e) ? e : refuse('internal', (e as Error).message);
    } finally {
      phase = null;
    }
  };

  /** One schedule tick: check when due, then upgrade on our own when every rule allows it. */
  const tick = async () => {
    const due = !state.checkedAt || now().getTime() - Date.parse(state.checkedAt) >= intervalMs;
    if (due) await check();
    const p = plan();
    const target = p.auto.target?.version;
    if (!target || p.auto.blockedBy.length > 0 || phase || autoTried.has(target)) return;
    autoTried.add(target);
    await apply(target).catch(() => undefined); // already recorded as last_error
  };

  return {
    status,
    check,
    apply,
    start() {
      if (timer || !checksOn || opts.policy === 'off') return;
      const loop = (delay: number) => {
        timer = setTimeout(() => void tick().finally(() => timer && loop(TICK_MS)), delay);
        timer.unref();
      };
      loop(FIRST_CHECK_DELAY_MS);
    },
    stop() {
      if (timer) clearTimeout(timer);
      timer = null;
    },
  };
}

/** Runs the operator's pre-command through the shell; resolves with its exit code (-1 when it could not start). */
function runShell(command: string, env: Record<string, string>): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(command, { shell: true, stdio: 'inherit', env: { ...process.env, ...env }, timeout: PRE_COMMAND_TIMEOUT_MS });
    child.on('error', () => resolve(-1));
    child.on('close', (code) => resolve(code ?? -1));
  });
}
