/**
 * Runs a heavy tool (ffmpeg, pdftoppm, soffice, pdftotext) as its own process
 * at low CPU priority, so a thumbnail or text extraction never competes with
 * requests for the event loop or at full priority for the cores.
 */
import { spawn } from 'node:child_process';
import { AppError } from '../errors';
import { adoptBackgroundChild } from './proc-cpu';

const STDERR_TAIL = 2000;

export interface ToolOptions {
  signal: AbortSignal;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

/**
 * Resolves when `bin` exits 0; otherwise rejects with an Error carrying the
 * exit status and the tail of stderr. The signal kills the process.
 */
export async function runTool(bin: string, args: string[], o: ToolOptions): Promise<void> {
  await run(bin, args, o, 0);
}

/**
 * As `runTool`, keeping what the tool writes to stdout, at most `maxBytes`:
 * a tool that writes more is killed there and its output so far comes back
 * with `capped` (whatever its exit status would have been). `stderr`: its
 * tail, for tools that exit 0 after a complaint.
 */
export function runToolOutput(bin: string, args: string[], o: ToolOptions & { maxBytes: number }): Promise<ToolOutput> {
  return run(bin, args, o, o.maxBytes);
}

interface ToolOutput {
  stdout: Buffer;
  capped: boolean;
  stderr: string;
}

function run(bin: string, args: string[], o: ToolOptions, maxStdout: number): Promise<ToolOutput> {
  return new Promise((resolve, reject) => {
    if (o.signal.aborted) return reject(o.signal.reason ?? new AppError('cancelled'));
    // Its own process group: soffice is a launcher whose office process inherits stderr, so killing the
    // launcher alone left the pipe open and the run (and a shutdown waiting for it) hanging.
    // Low priority, and its CPU counts against the governor's budget while it runs.
    const child = adoptBackgroundChild(
      spawn(bin, args, { cwd: o.cwd, env: o.env ?? process.env, stdio: ['ignore', maxStdout > 0 ? 'pipe' : 'ignore', 'pipe'], detached: true }),
    );
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-STDERR_TAIL)));
    const kill = () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL'); // the group is gone already (or no groups here): the process itself
      }
    };
    const out: Buffer[] = [];
    let kept = 0;
    let capped = false;
    child.stdout?.on('data', (d: Buffer) => {
      if (capped) return;
      const room = maxStdout - kept;
      out.push(d.length > room ? d.subarray(0, room) : d);
      kept += Math.min(d.length, room);
      if (d.length >= room) {
        capped = true;
        kill();
      }
    });
    o.signal.addEventListener('abort', kill, { once: true });
    child.once('error', (e) => {
      o.signal.removeEventListener('abort', kill);
      reject(e);
    });
    child.once('close', (code, sig) => {
      o.signal.removeEventListener('abort', kill);
      if (o.signal.aborted) return reject(o.signal.reason ?? new AppError('cancelled'));
      if (code === 0 || capped) return resolve({ stdout: Buffer.concat(out), capped, stderr: stderr.trim() });
      const name = bin.slice(bin.lastIndexOf('/') + 1);
      reject(new Error(`${name} exited with ${code ?? sig}: ${stderr.trim().split('\n').slice(-3).join(' | ')}`));
    });
  });
}
