/**
 * A real WebDAV server for tests: `rclone serve webdav` on a free loopback
 * port, serving its own temp dir, optionally over TLS with a self-signed
 * certificate. Also the small helpers the FTP tests reuse: process control,
 * a self-signed certificate, and bodies for upload checks.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { createConnection } from 'node:net';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { Entry, StorageDriver } from '../../server/storage/types';
import { freePort, tempDir } from './tools';

export interface RcloneWebdav {
  url: string;
  port: number;
  /** The directory served at the URL's root. */
  dir: string;
  user: string;
  pass: string;
  /** SHA-256 fingerprint (colon hex) of the server certificate when TLS is on. */
  fingerprint?: string;
  /** Stops the server (by PID) but keeps its files, so `start()` can bring it back on the same port. */
  stop(): Promise<void>;
  /** Kills the server with SIGKILL, like a crash or a pulled cable: connections drop mid-request. */
  crash(): Promise<void>;
  start(): Promise<void>;
  /** Stops the server and removes its temp dir. */
  teardown(): Promise<void>;
}

/** Starts rclone webdav; resolves once the port accepts connections. */
export async function startRcloneWebdav(opts: { tls?: boolean } = {}): Promise<RcloneWebdav> {
  const tmp = tempDir('filedock-webdav-');
  const dir = join(tmp.dir, 'data');
  execFileSync('mkdir', ['-p', dir]);
  const port = await freePort();
  const user = 'dock';
  const pass = 'secret-pass';
  const cert = opts.tls ? selfSignedCert(tmp.dir) : undefined;
  const args = ['serve', 'webdav', dir, '--addr', `127.0.0.1:${port}`, '--user', user, '--pass', pass, '--log-level', 'ERROR'];
  if (cert) args.push('--cert', cert.certPath, '--key', cert.keyPath);
  let child: ChildProcess | undefined;
  const server: RcloneWebdav = {
    url: `${cert ? 'https' : 'http'}://127.0.0.1:${port}`,
    port,
    dir,
    user,
    pass,
    fingerprint: cert?.fingerprint,
    async start() {
      child = spawn('rclone', args, {
        stdio: ['ignore', 'ignore', 'inherit'],
        env: { ...process.env, RCLONE_CONFIG: join(tmp.dir, 'rclone.conf') },
      });
      await waitForPort(port, child);
    },
    async stop() {
      await stopChild(child);
      child = undefined;
    },
    async crash() {
      await stopChild(child, 'SIGKILL');
      child = undefined;
    },
    async teardown() {
      await server.stop();
      tmp.cleanup();
    },
  };
  await server.start();
  return server;
}

/** Polls `port` on 127.0.0.1 until it accepts a connection; fails fast when `child` exits. */
export async function waitForPort(port: number, child: ChildProcess, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`server exited (${child.exitCode ?? child.signalCode}) before listening on ${port}`);
    if (await canConnect(port)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`server did not listen on ${port} within ${timeoutMs} ms`);
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createConnection({ host: '127.0.0.1', port }, () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });
}

/** `signal` (SIGTERM) by PID, SIGKILL after 3 s; resolves when the process is gone. */
export async function stopChild(child: ChildProcess | undefined, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
  await gone;
  clearTimeout(timer);
}

/** A self-signed certificate for 127.0.0.1 made with openssl in `dir`. */
export function selfSignedCert(dir: string, name = 'server'): { certPath: string; keyPath: string; fingerprint: string } {
  const certPath = join(dir, `${name}.crt`);
  const keyPath = join(dir, `${name}.key`);
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyPath, '-out', certPath, '-days', '2',
    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1',
  ], { stdio: 'ignore' });
  return { certPath, keyPath, fingerprint: new X509Certificate(readFileSync(certPath)).fingerprint256 };
}

/**
 * Writes `bytes` through `driver` from a generated 1 MiB-chunk body and returns
 * the peak RSS growth seen meanwhile (sampled every 25 ms).
 */
export async function flatMemoryUpload(driver: StorageDriver, path: string, bytes: number): Promise<{ growth: number; entry: Entry }> {
  const chunk = Buffer.alloc(1024 * 1024, 0x5a);
  let left = bytes;
  const body = new Readable({
    highWaterMark: chunk.length,
    read() {
      const n = Math.min(left, chunk.length);
      left -= n;
      this.push(n === 0 ? null : chunk.subarray(0, n));
    },
  });
  const base = process.memoryUsage.rss();
  let peak = base;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 25);
  try {
    const entry = await driver.write(path, body, { size: bytes });
    return { growth: Math.max(peak, process.memoryUsage.rss()) - base, entry };
  } finally {
    clearInterval(timer);
  }
}

/** A body that emits `chunks` chunks of `chunkBytes`, one every 10 ms; `sent(n)` resolves after the n-th. */
export function slowBody(chunkBytes: number, chunks: number): { stream: Readable; sent(n: number): Promise<void> } {
  let count = 0;
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  const stream = new Readable({
    read() {
      setTimeout(() => {
        if (stream.destroyed) return;
        count += 1;
        this.push(count > chunks ? null : Buffer.alloc(chunkBytes, 0x41));
        for (const w of waiters.filter((x) => x.n <= count)) w.resolve();
      }, 10);
    },
  });
  return { stream, sent: (n) => new Promise((resolve) => (n <= count ? resolve() : waiters.push({ n, resolve }))) };
}
