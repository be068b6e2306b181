/**
 * Extraction's tools started from one worker thread (launch.worker.ts) instead of the event loop: spawn()
 * blocks its caller from the fork until the child's exec. Measured (bench/fulltext-spawn.ts, a 392 MB process
 * running pdftotext two at a time, load 11): the loop's delay p50 54–65 ms, p99 175–196 ms when the main
 * thread spawns; 11 ms and 73–80 ms from a worker thread. The answer matches lib/run-tool.ts
 * `runToolOutput`: stdout up to `maxBytes` (`capped` past it), the stderr tail; a non-zero exit rejects with
 * it; the signal kills the tool's process group. The children are the service's own: the kernel folds their
 * CPU into ours once reaped, so the governor counts it then (not while one runs, as it does for children
 * started on the main thread).
 */
import type { Worker } from 'node:worker_threads';
import { AppError } from '../errors';
import { startWorker } from '../lib/worker';

export interface LaunchRequest {
  id: number;
  bin: string;
  args: string[];
  cwd?: string;
  env: NodeJS.ProcessEnv;
  maxBytes: number;
}

export interface LaunchDone {
  id: number;
  type: 'done';
  error?: string;
  code?: number | null;
  signal?: NodeJS.Signals | null;
  capped?: boolean;
  stderr?: string;
  stdout?: Uint8Array;
}

type Reply = LaunchDone | { id: number; type: 'pid'; pid: number };

interface Pending {
  done(d: LaunchDone): void;
  pid?: number;
  /** Aborted before the pid came: kill it as soon as it does. */
  killed: boolean;
}

let worker: Worker | null = null;
let nextId = 1;
const pending = new Map<number, Pending>();

const killGroup = (pid: number) => {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    /* already gone */
  }
};

function launcher(): Worker {
  if (worker) return worker;
  const w = startWorker(new URL('./launch.worker.ts', import.meta.url));
  w.on('message', (r: Reply) => {
    const p = pending.get(r.id);
    if (!p) return;
    if (r.type === 'pid') {
      p.pid = r.pid;
      if (p.killed) killGroup(r.pid);
      return;
    }
    pending.delete(r.id);
    if (pending.size === 0) w.unref();
    p.done(r);
  });
  const lost = (e: unknown) => {
    if (worker === w) worker = null;
    for (const [id, p] of pending) {
      pending.delete(id);
      if (p.pid) killGroup(p.pid);
      p.done({ id, type: 'done', error: `the tool launcher stopped: ${e instanceof Error ? e.message : String(e)}` });
    }
  };
  w.on('error', lost);
  w.on('exit', (code) => lost(new Error(`exit ${code}`)));
  // Idle, it must not keep the process alive (unref after the listeners: adding one refs it again).
  w.unref();
  worker = w;
  return w;
}

/** Runs `bin` from the launcher thread; resolves with its output when it exits 0 or was capped. */
export function launchTool(
  bin: string,
  args: string[],
  o: { signal: AbortSignal; maxBytes: number; env?: NodeJS.ProcessEnv; cwd?: string },
): Promise<{ stdout: Buffer; capped: boolean; stderr: string }> {
  return new Promise((resolve, reject) => {
    if (o.signal.aborted) return reject(o.signal.reason ?? new AppError('cancelled'));
    const id = nextId++;
    const kill = () => {
      p.killed = true;
      if (p.pid) killGroup(p.pid);
    };
    const p: Pending = {
      killed: false,
      done: (d) => {
        o.signal.removeEventListener('abort', kill);
        if (o.signal.aborted) return reject(o.signal.reason ?? new AppError('cancelled'));
        if (d.error !== undefined) return reject(new Error(d.error));
        const stdout = Buffer.from(d.stdout!.buffer, d.stdout!.byteOffset, d.stdout!.byteLength);
        if (d.code === 0 || d.capped) return resolve({ stdout, capped: !!d.capped, stderr: d.stderr ?? '' });
        const name = bin.slice(bin.lastIndexOf('/') + 1);
        reject(new Error(`${name} exited with ${d.code ?? d.signal}: ${(d.stderr ?? '').split('\n').slice(-3).join(' | ')}`));
      },
    };
    o.signal.addEventListener('abort', kill, { once: true });
    pending.set(id, p);
    const w = launcher();
    // Held while a tool runs: a caller awaiting it may be all that keeps the process up.
    w.ref();
    // The worker's process.env is a copy taken at its start: the caller's (or ours now) goes with each run.
    w.postMessage({ id, bin, args, cwd: o.cwd, env: o.env ?? process.env, maxBytes: o.maxBytes } satisfies LaunchRequest);
  });
}
