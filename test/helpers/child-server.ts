/**
 * `service serve` from source in a child process, on port 0, with a data
 * folder the caller owns, so a test can kill it (SIGKILL: a crash) and start
 * it again on the same data.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

const root = new URL('../..', import.meta.url).pathname;

export interface ChildServer {
  url: string;
  child: ChildProcess;
  /** Everything the server printed so far. */
  log(): string;
  /** Every host-protocol message the server sent so far (docs/server-host-protocol.md). */
  messages(): Array<{ type: string; [k: string]: unknown }>;
  /** Kills at once (a crash: no drain, no cleanup). */
  kill(): Promise<void>;
  /** Graceful stop (SIGTERM), then SIGKILL after 5 s. */
  stop(): Promise<void>;
}

/**
 * Starts the server with `env` over a quiet default (loopback, port 0, no update check); resolves once it listens.
 * `built`: the bundle `node scripts/build.mjs` wrote (dist/server/cli.js), as installed, instead of the sources.
 */
export async function spawnServer(env: Record<string, string>, o: { built?: boolean } = {}): Promise<ChildServer> {
  const child = fork(join(root, o.built ? 'dist/server/cli.js' : 'server/cli/main.ts'), ['serve'], {
    execArgv: o.built ? [] : ['--import', 'tsx'],
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    env: { ...process.env, SERVICE_PORT: '0', SERVICE_HOST: '127.0.0.1', SERVICE_UPDATE_CHECK: '0', ...env },
  });
  let log = '';
  const messages: Array<{ type: string }> = [];
  child.on('message', (m: { type: string }) => messages.push(m));
  child.stdout!.on('data', (b) => (log += b));
  child.stderr!.on('data', (b) => (log += b));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start in 30 s:\n${log}`)), 30_000);
    child.on('message', (m: { type?: string; port?: number }) => {
      if (m?.type !== 'ready') return;
      clearTimeout(timer);
      resolve(`http://127.0.0.1:${m.port}`);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${log}`));
    });
  });
  const end = async (signal: NodeJS.Signals, graceMs: number) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill(signal);
    await Promise.race([exited, new Promise((r) => setTimeout(r, graceMs))]);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  return { url, child, log: () => log, messages: () => messages, kill: () => end('SIGKILL', 0), stop: () => end('SIGTERM', 5000) };
}
