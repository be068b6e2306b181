/**
 * The thread that starts extraction's tools (launch.ts). Node's spawn() forks and then waits for the
 * child's exec: on a loaded machine that held the service's event loop 40–330 ms per PDF (docs/benchmarks.md,
 * "listing and upload while indexing"); here it holds only this thread. The tool runs at low priority in its
 * own process group; its stdout is kept up to `maxBytes` (past it the group is killed and the output so far
 * comes back `capped`), its stderr's tail always.
 */
import { spawn } from 'node:child_process';
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { BACKGROUND_NICE } from '../lib/proc-cpu';
import type { LaunchDone, LaunchRequest } from './launch';

const STDERR_TAIL = 2000;
const port = parentPort!;

const killGroup = (pid: number) => {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    /* already gone */
  }
};

port.on('message', (m: LaunchRequest) => {
  const done = (d: Omit<LaunchDone, 'id' | 'type'>) => port.postMessage({ id: m.id, type: 'done', ...d } satisfies LaunchDone);
  let child: ReturnType<typeof spawn>;
  try {
    child = spawn(m.bin, m.args, { cwd: m.cwd, env: m.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  } catch (e) {
    return done({ error: e instanceof Error ? e.message : String(e) });
  }
  const pid = child.pid;
  if (pid) {
    try {
      setPriority(pid, BACKGROUND_NICE);
    } catch {
      /* gone already, or refused: it runs at our priority */
    }
    port.postMessage({ id: m.id, type: 'pid', pid });
  }
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-STDERR_TAIL)));
  const out: Buffer[] = [];
  let kept = 0;
  let capped = false;
  child.stdout!.on('data', (d: Buffer) => {
    if (capped) return;
    const room = m.maxBytes - kept;
    out.push(d.length > room ? d.subarray(0, room) : d);
    kept += Math.min(d.length, room);
    if (d.length >= room) {
      capped = true;
      if (pid) killGroup(pid);
    }
  });
  child.once('error', (e) => done({ error: e.message }));
  child.once('close', (code, signal) => done({ code, signal, capped, stderr: stderr.trim(), stdout: Buffer.concat(out) }));
});
