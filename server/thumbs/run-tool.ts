/**
 * Runs a heavy thumbnail tool (ffmpeg, pdftoppm, soffice) as its own process
 * at low CPU priority, so a thumbnail run never competes with requests for the
 * event loop or at full priority for the cores.
 */
import { spawn } from 'node:child_process';
import { AppError } from '../errors';
import { adoptBackgroundChild } from '../lib/proc-cpu';

const STDERR_TAIL = 2000;

/**
 * Resolves when `bin` exits 0; otherwise rejects with an Error carrying the
 * exit status and the tail of stderr. The signal kills the process.
 */
export function runTool(bin: string, args: string[], o: { signal: AbortSignal; cwd?: string; env?: NodeJS.ProcessEnv }): Promise<void> {
  return new Promise((resolve, reject) => {
    if (o.signal.aborted) return reject(o.signal.reason ?? new AppError('cancelled'));
    // Its own process group: soffice is a launcher whose office process inherits stderr, so killing the
    // launcher alone left the pipe open and the run (and a shutdown waiting for it) hanging.
    // Low priority, and its CPU counts against the governor's budget while it runs.
    const child = adoptBackgroundChild(spawn(bin, args, { cwd: o.cwd, env: o.env ?? process.env, stdio: ['ignore', 'ignore', 'pipe'], detached: true }));
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-STDERR_TAIL)));
    const onAbort = () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL'); // the group is gone already (or no groups here): the process itself
      }
    };
    o.signal.addEventListener('abort', onAbort, { once: true });
    child.once('error', (e) => {
      o.signal.removeEventListener('abort', onAbort);
      reject(e);
    });
    child.once('close', (code, sig) => {
      o.signal.removeEventListener('abort', onAbort);
      if (o.signal.aborted) return reject(o.signal.reason ?? new AppError('cancelled'));
      if (code === 0) return resolve();
      const name = bin.slice(bin.lastIndexOf('/') + 1);
      reject(new Error(`${name} exited with ${code ?? sig}: ${stderr.trim().split('\n').slice(-3).join(' | ')}`));
    });
  });
}
