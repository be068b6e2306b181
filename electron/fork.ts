/**
 * The two ways to start the server as a supervised child, both behind the
 * `ForkServer` shape: Node's `child_process.fork` (tests, headless hosts) and
 * Electron's `utilityProcess.fork` (the desktop app; the module is passed in so
 * this file never loads `electron`).
 */
import { fork } from 'node:child_process';
import type { UtilityProcess, ForkOptions } from 'electron';
import type { ForkServer, HostMessage, ServerChild, ServerMessage } from './types';

// A Record, so a message type added to the protocol is a compile error here until it is let through.
const KNOWN: Record<ServerMessage['type'], true> = {
  ready: true,
  fatal: true,
  activity: true,
  notify: true,
  replica: true,
  storages: true,
  governor: true,
  inhibit: true,
  uplink: true,
  stopped: true,
};
const MESSAGE_TYPES = new Set(Object.keys(KNOWN));

/** Narrows an IPC payload to a protocol message; anything else is ignored by the host. */
export function asServerMessage(raw: unknown): ServerMessage | null {
  if (!raw || typeof raw !== 'object') return null;
  const type = (raw as { type?: unknown }).type;
  return typeof type === 'string' && MESSAGE_TYPES.has(type) ? (raw as ServerMessage) : null;
}

function hardKill(pid: number | undefined, fallback: () => void): void {
  try {
    if (pid) process.kill(pid, 'SIGKILL');
    else fallback();
  } catch {
    // Already gone: killing is idempotent by contract.
  }
}

/**
 * `child_process.fork` of `modulePath serve`; `execArgv` lets tests run the
 * TypeScript entry through tsx. Output is piped so the host can log it.
 */
export function nodeFork(modulePath: string, execArgv: string[] = [], args: string[] = ['serve']): ForkServer {
  return (env) => {
    const child = fork(modulePath, args, { env, execArgv, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
    let exited = false;
    return {
      pid: child.pid,
      stdout: child.stdout,
      stderr: child.stderr,
      send(message: HostMessage) {
        if (!exited && child.connected) child.send(message, () => undefined);
      },
      onMessage(listener) {
        child.on('message', (raw) => {
          const m = asServerMessage(raw);
          if (m) listener(m);
        });
      },
      onExit(listener) {
        child.once('exit', (code) => {
          exited = true;
          listener(code);
        });
      },
      kill: () => hardKill(child.pid, () => child.kill('SIGKILL')),
    } satisfies ServerChild;
  };
}

/** The same over Electron's utility process (stdout/stderr piped into our log). */
export function utilityFork(
  utility: { fork(modulePath: string, args?: string[], options?: ForkOptions): UtilityProcess },
  modulePath: string,
  args: string[] = ['serve'],
): ForkServer {
  return (env) => {
    const child = utility.fork(modulePath, args, { env, stdio: 'pipe', serviceName: 'Filedock server' });
    let exited = false;
    child.once('exit', () => {
      exited = true;
    });
    return {
      get pid() {
        return child.pid;
      },
      stdout: child.stdout,
      stderr: child.stderr,
      send(message: HostMessage) {
        if (!exited) child.postMessage(message);
      },
      onMessage(listener) {
        child.on('message', (raw: unknown) => {
          const m = asServerMessage(raw);
          if (m) listener(m);
        });
      },
      onExit(listener) {
        child.once('exit', (code: number) => listener(code));
      },
      kill: () => hardKill(child.pid, () => child.kill()),
    } satisfies ServerChild;
  };
}
