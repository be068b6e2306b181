/**
 * Replaces a headless install: the self-contained bundle directory that holds
 * `bin/service`, its own Node runtime, `dist/` and `node_modules/` (see
 * docs/updates.md). The new bundle is unpacked beside the old one (same file
 * system, so each move is one rename), proven by running its `version`
 * command, and only then swapped in; the old one stays as `<root>.bak-<from>`.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { AppError } from '../errors';
import { downloadVerified, FetchFailure } from './net';
import type { InstallContext, InstallOutcome, InstallTarget, UpdaterPort } from './port';

const SMOKE_TIMEOUT_MS = 60_000;
const UNPACK_TIMEOUT_MS = 10 * 60_000;

export interface BundlePortOptions {
  /** The bundle directory being replaced (the folder holding `bin/service`). */
  root: string;
  /** Where downloads are kept (inside the data dir). */
  downloadDir: string;
  /** The running version, for the User-Agent. */
  version: string;
  /** Restarts through the supervisor after the swap; without it the outcome says restart required. */
  restart?: () => void;
}

/** The journal of a swap in progress, beside the install so recovery needs nothing else. */
interface SwapJournal {
  from: string;
  to: string;
  backup: string;
  staged: string;
  at: string;
}

const journalPath = (root: string) => `${root}.swap.json`;
export const backupPath = (root: string, version: string) => `${root}.bak-${version}`;
export const stagedPath = (root: string, version: string) => `${root}.new-${version}`;
const launcher = (root: string) => join(root, 'bin', process.platform === 'win32' ? 'service.cmd' : 'service');

const refuse = (reason: string, message: string) => new AppError('update_refused', { reason }, { reason, message }, message);

function run(file: string, args: string[], timeout: number): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout, maxBuffer: 1 << 20, windowsHide: true, shell: process.platform === 'win32' }, (err, stdout, stderr) => {
      if (err) reject(Object.assign(err, { stderr: String(stderr).trim() }));
      else resolve({ stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

/**
 * The bundle directory around a Node binary at `<root>/node/bin/node` (or
 * `<root>/node/node.exe`), or null when this process is not running from a
 * bundle (a source checkout, a container image built differently).
 */
export function bundleRootOf(execPath: string): string | null {
  const nodeDir = basename(dirname(execPath)) === 'bin' ? dirname(dirname(execPath)) : dirname(execPath);
  if (basename(nodeDir) !== 'node') return null;
  const root = dirname(nodeDir);
  return existsSync(launcher(root)) ? root : null;
}

/**
 * Finishes or undoes a swap that a crash interrupted. Returns a sentence for
 * the status when it had to act, null when there was nothing to recover.
 * Idempotent; safe to call at every start.
 */
export function recoverSwap(root: string): string | null {
  let j: SwapJournal;
  try {
    j = JSON.parse(readFileSync(journalPath(root), 'utf8')) as SwapJournal;
  } catch {
    return null;
  }
  let message: string;
  if (!existsSync(root) && existsSync(j.backup)) {
    renameSync(j.backup, root);
    message = `the upgrade from ${j.from} to ${j.to} was interrupted between the moves; ${j.from} was put back`;
  } else {
    message = `the upgrade from ${j.from} to ${j.to} was interrupted after the swap; ${j.to} is in place`;
  }
  rmSync(j.staged, { recursive: true, force: true });
  rmSync(journalPath(root), { force: true });
  return message;
}

/** A port that replaces the bundle at `opts.root`. */
export function bundlePort(opts: BundlePortOptions): UpdaterPort {
  const { root } = opts;
  return {
    needsAsset: true,
    async install(target: InstallTarget, ctx: InstallContext): Promise<InstallOutcome> {
      if (!target.asset) throw refuse('no_asset', `no asset for ${process.platform}/${process.arch} in ${target.version}`);
      mkdirSync(opts.downloadDir, { recursive: true });
      const archive = join(opts.downloadDir, `filedock-server-${target.version}.tar.gz`);
      ctx.onPhase('downloading');
      try {
        await downloadVerified(target.asset.url, archive, target.asset.sha256, opts.version);
      } catch (e) {
        const f = e as FetchFailure;
        throw refuse(f.reason === 'checksum_mismatch' ? 'checksum_mismatch' : 'download_failed', f.message);
      }

      const staged = stagedPath(root, target.version);
      try {
        ctx.onPhase('unpacking');
        rmSync(staged, { recursive: true, force: true });
        mkdirSync(staged);
        await run('tar', ['-xzf', archive, '-C', staged, '--strip-components=1'], UNPACK_TIMEOUT_MS).catch((e) => {
          throw refuse('unpack_failed', `unpacking ${basename(archive)} failed: ${e.stderr || e.message}`);
        });
        if (!existsSync(launcher(staged))) throw refuse('unpack_failed', `${basename(archive)} has no bin/service: not a server bundle`);

        ctx.onPhase('smoke_test');
        const out = await run(launcher(staged), ['version'], SMOKE_TIMEOUT_MS).catch((e) => {
          throw refuse('smoke_test_failed', `the new build's version command failed: ${e.stderr || e.message}`);
        });
        const printed = out.stdout.trim();
        if (!new RegExp(`(^|[^\\w.])${target.version.replace(/\./g, '\\.')}($|[^\\w.])`).test(printed))
          throw refuse('smoke_test_failed', `the new build reports ${JSON.stringify(printed.slice(0, 200))}, expected ${target.version}`);

        ctx.onPhase('snapshot');
        await ctx.beforeSwap();
      } catch (e) {
        rmSync(staged, { recursive: true, force: true });
        throw e;
      } finally {
        rmSync(archive, { force: true });
      }

      ctx.onPhase('swapping');
      swap(root, staged, target.from, target.version);
      if (!opts.restart) return { restartRequired: true };
      ctx.onPhase('restarting');
      opts.restart();
      return { restartRequired: false };
    },
  };
}

/** The two moves, journalled; a failure of the second puts the old bundle back at once. */
function swap(root: string, staged: string, from: string, to: string): void {
  const backup = backupPath(root, from);
  // One backup is kept: the build we are leaving. Older ones only cost disk.
  const prefix = `${basename(root)}.bak-`;
  for (const n of readdirSync(dirname(root)))
    if (n.startsWith(prefix) && statSync(join(dirname(root), n)).isDirectory()) rmSync(join(dirname(root), n), { recursive: true, force: true });
  const journal: SwapJournal = { from, to, backup, staged, at: new Date().toISOString() };
  writeFileSync(journalPath(root), JSON.stringify(journal));
  try {
    renameSync(root, backup);
  } catch (e) {
    rmSync(journalPath(root), { force: true });
    rmSync(staged, { recursive: true, force: true });
    throw refuse('swap_failed', `cannot move ${root} aside: ${(e as Error).message}`);
  }
  try {
    renameSync(staged, root);
  } catch (e) {
    renameSync(backup, root);
    rmSync(journalPath(root), { force: true });
    rmSync(staged, { recursive: true, force: true });
    throw refuse('swap_failed', `cannot move the new build into place: ${(e as Error).message}; ${from} stays`);
  }
  rmSync(journalPath(root), { force: true });
}
