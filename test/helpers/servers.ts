/**
 * Process and port control shared by the helpers that run real servers
 * (rclone, vsftpd, sshd, smbd, s3rver, clamd): waiting for a listener,
 * stopping a child by PID, finding a server's forked sessions, and a
 * self-signed certificate for TLS servers on 127.0.0.1.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';

const POLL_MS = 50;

/** A test server a test can take down and bring back, on the same port with the same files. */
export interface RestartableServer {
  port: number;
  user: string;
  pass: string;
  /** SHA-256 fingerprint (colon hex) of the server certificate when TLS is on. */
  fingerprint?: string;
  /** Stops the server (by PID) but keeps its files, so `start()` can bring it back on the same port. */
  stop(): Promise<void>;
  /** Kills the server with SIGKILL, like a crash or a pulled cable: connections drop mid-transfer. */
  crash(): Promise<void>;
  /** Starts it again; resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops the server and removes its temp dir. */
  teardown(): Promise<void>;
}

/** The life-cycle half of a `RestartableServer`. */
export type Lifecycle = Pick<RestartableServer, 'start' | 'stop' | 'crash' | 'teardown'>;

/**
 * Start/stop/crash/teardown for a server that runs as one child process
 * listening on `port`. `launch` spawns it; `endSessions` kills what it forked
 * per connection before each stop (some servers keep serving those otherwise);
 * `cleanup` removes its files at teardown. Stopping a stopped server is a no-op.
 */
export function childLifecycle(port: number, launch: () => ChildProcess, cleanup: () => void, endSessions: (pid: number) => void = () => undefined): Lifecycle {
  let child: ChildProcess | undefined;
  const halt = async (signal: NodeJS.Signals) => {
    if (child?.pid) endSessions(child.pid);
    await stopChild(child, signal);
    child = undefined;
  };
  return {
    async start() {
      child = launch();
      await waitForPort(port, child);
    },
    stop: () => halt('SIGTERM'),
    crash: () => halt('SIGKILL'),
    async teardown() {
      await halt('SIGTERM');
      cleanup();
    },
  };
}

/** True when something accepts a TCP connection on 127.0.0.1:`port`. */
export function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createConnection({ host: '127.0.0.1', port }, () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });
}

/** Polls `port` on 127.0.0.1 until it accepts a connection; fails fast when `child` exits. */
export async function waitForPort(port: number, child: ChildProcess, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`server exited (${child.exitCode ?? child.signalCode}) before listening on ${port}`);
    if (await canConnect(port)) return;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  throw new Error(`server did not listen on ${port} within ${timeoutMs} ms`);
}

/** Polls until nothing listens on `port` any more, or `timeoutMs` passed (then resolves anyway). */
export async function waitForPortClosed(port: number, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && (await canConnect(port))) await new Promise((r) => setTimeout(r, POLL_MS));
}

/** `signal` (SIGTERM) by PID, SIGKILL after 3 s; resolves when the process is gone. Idempotent. */
export async function stopChild(child: ChildProcess | null | undefined, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
  await gone;
  clearTimeout(timer);
}

/**
 * Every live process whose parent chain leads to `pid`, down to `depth` levels
 * (servers that fork per session often call setsid, so process groups miss them).
 */
export function descendants(pid: number, depth = Infinity): number[] {
  const parentOf = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // The command name may hold spaces and parens: the ppid is the 2nd field after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parentOf.set(Number(name), ppid);
    } catch {
      // The process ended while we scanned.
    }
  }
  const out: number[] = [];
  let frontier = [pid];
  for (let level = 0; level < depth && frontier.length > 0; level++) {
    const next: number[] = [];
    for (const [child, parent] of parentOf) if (frontier.includes(parent)) next.push(child);
    out.push(...next);
    frontier = next;
  }
  return out;
}

/** SIGKILLs `pid`; a process that is already gone is not an error. */
export function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/** A self-signed certificate for 127.0.0.1 made with openssl in `dir`. */
export function selfSignedCert(dir: string, name = 'server'): { certPath: string; keyPath: string; fingerprint: string } {
  const certPath = join(dir, `${name}.crt`);
  const keyPath = join(dir, `${name}.key`);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      keyPath,
      '-out',
      certPath,
      '-days',
      '2',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  return { certPath, keyPath, fingerprint: new X509Certificate(readFileSync(certPath)).fingerprint256 };
}
