/**
 * The two ways to ask ClamAV: `clamscan` per file (binary mode, bounded by a
 * 60 s timeout) and clamd's INSTREAM command over TCP or a unix socket
 * (daemon mode). A verdict is `clean` or `infected` with its signature;
 * everything else (a missing tool, a refused or hanging daemon, a size-limit
 * reply, an unknown exit code) throws, and a scan that throws is never
 * taken as clean.
 */
import { spawn } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import type { Readable } from 'node:stream';
import { AppError } from '../errors';
import { pipeFrom } from '../lib/streams';
import { adoptBackgroundChild } from '../lib/proc-cpu';

export type Verdict = { infected: false } | { infected: true; signature: string };

export interface ScanInput {
  /** A local file path when the storage has one (clamscan reads it directly). */
  localPath?: string;
  /** Otherwise the bytes, streamed. */
  open: () => Promise<Readable>;
}

export interface Probe {
  reachable: boolean;
  version: string;
  /** Why it failed; 'ok' when reachable. */
  health: string;
}

export interface Scanner {
  scan(input: ScanInput, signal?: AbortSignal): Promise<Verdict>;
  probe(): Promise<Probe>;
}

/** Binary mode's per-file bound (spec: Limits). */
export const CLAMSCAN_TIMEOUT_MS = 60_000;
/** clamscan refuses larger per-file limits. */
const CLAMSCAN_MAX_MB = 4000;

const scanError = (reason: string) => new AppError('internal', { reason }, { reason }, `antivirus scan failed: ${reason}`);

/** clamscan per file: exit 0 clean, 1 infected, anything else an error. */
export class ClamscanScanner implements Scanner {
  constructor(private o: { bin: string; database: string; maxMb: number; timeoutMs?: number }) {}

  async scan(input: ScanInput, signal?: AbortSignal): Promise<Verdict> {
    const mb = Math.min(this.o.maxMb, CLAMSCAN_MAX_MB);
    const args = ['--no-summary', '--stdout', `--max-filesize=${mb}M`, `--max-scansize=${mb}M`];
    if (this.o.database) args.push('-d', this.o.database);
    args.push('--', input.localPath ?? '-');
    const { code, out } = await run(this.o.bin, args, this.o.timeoutMs ?? CLAMSCAN_TIMEOUT_MS, input.localPath ? undefined : await input.open(), signal);
    if (code === 0) return { infected: false };
    const found = /: (.+) FOUND$/m.exec(out);
    if (code === 1 && found) return { infected: true, signature: found[1] };
    throw scanError(`clamscan exited with ${code}: ${out.trim().split('\n').pop() ?? ''}`);
  }

  async probe(): Promise<Probe> {
    try {
      const { code, out } = await run(this.o.bin, ['--version'], 10_000);
      return code === 0
        ? { reachable: true, version: out.trim(), health: 'ok' }
        : { reachable: false, version: '', health: `clamscan --version exited with ${code}` };
    } catch (e) {
      return { reachable: false, version: '', health: reasonOf(e) };
    }
  }
}

/** clamd over TCP (`host:port`, `[v6]:port`) or a unix socket (`/path` or `unix:/path`). */
export class ClamdScanner implements Scanner {
  constructor(private o: { address: string; timeoutMs?: number }) {}

  async scan(input: ScanInput, signal?: AbortSignal): Promise<Verdict> {
    const body = await input.open();
    const reply = await this.talk('zINSTREAM\0', body, signal);
    if (/^stream: OK$/.test(reply)) return { infected: false };
    const found = /^stream: (.+) FOUND$/.exec(reply);
    if (found) return { infected: true, signature: found[1] };
    throw scanError(`clamd: ${reply || 'no answer'}`);
  }

  async probe(): Promise<Probe> {
    try {
      const pong = await this.talk('zPING\0', null, undefined, 5000);
      if (pong !== 'PONG') return { reachable: false, version: '', health: `clamd answered "${pong}" to PING` };
      return { reachable: true, version: await this.talk('zVERSION\0', null, undefined, 5000), health: 'ok' };
    } catch (e) {
      return { reachable: false, version: '', health: reasonOf(e) };
    }
  }

  /** Sends one command (and for INSTREAM the length-prefixed chunks), returns the reply up to NUL. */
  private talk(command: string, body: Readable | null, signal?: AbortSignal, timeoutMs = this.o.timeoutMs ?? CLAMSCAN_TIMEOUT_MS): Promise<string> {
    const target = parseAddress(this.o.address);
    return new Promise<string>((resolve, reject) => {
      const sock: Socket = 'path' in target ? connect(target.path) : connect(target.port, target.host);
      let reply = '';
      let settled = false;
      const done = (err: Error | null, value = '') => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        sock.destroy();
        body?.destroy();
        if (err) reject(err);
        else resolve(value);
      };
      const timer = setTimeout(
        () => done(new AppError('timeout', { seconds: Math.round(timeoutMs / 1000) }, undefined, 'clamd did not answer in time')),
        timeoutMs,
      );
      const onAbort = () => done(signal?.reason instanceof Error ? signal.reason : new AppError('cancelled'));
      signal?.addEventListener('abort', onAbort, { once: true });
      sock.setNoDelay(true);
      sock.on('error', (e) => done(scanError(`clamd at ${this.o.address}: ${e.message}`)));
      sock.on('data', (chunk) => {
        reply += chunk.toString('utf8');
        const nul = reply.indexOf('\0');
        if (nul >= 0) done(null, reply.slice(0, nul).trim());
      });
      sock.on('end', () => done(reply ? null : scanError('clamd closed the connection without an answer'), reply.replace(/\0$/, '').trim()));
      sock.on('connect', async () => {
        sock.write(command);
        if (!body) return;
        try {
          for await (const chunk of body) {
            if (settled) return;
            const buf = chunk as Buffer;
            const len = Buffer.alloc(4);
            len.writeUInt32BE(buf.length);
            if (!sock.write(Buffer.concat([len, buf]))) await new Promise((r) => sock.once('drain', r));
          }
          sock.write(Buffer.alloc(4));
        } catch (e) {
          done(scanError(`reading the file failed: ${reasonOf(e)}`));
        }
      });
    });
  }
}

/** `host:port`, `[::1]:port` or a socket path. */
export function parseAddress(addr: string): { host: string; port: number } | { path: string } {
  if (addr.startsWith('unix:')) return { path: addr.slice(5) };
  if (addr.startsWith('/')) return { path: addr };
  const m = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(addr.trim());
  if (!m) throw new AppError('not_configured', { reason: `bad clamd address "${addr}"` }, undefined, `bad clamd address "${addr}"`);
  return { host: m[1], port: Number(m[2]) };
}

function run(bin: string, args: string[], timeoutMs: number, stdin?: Readable, signal?: AbortSignal): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    // A background scan: low priority, and its CPU counts against the governor's budget.
    const child = adoptBackgroundChild(
      spawn(bin, args, { stdio: [stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'], signal, timeout: timeoutMs, killSignal: 'SIGKILL' }),
    );
    let out = '';
    child.stdout!.on('data', (c) => (out = (out + c.toString('utf8')).slice(-8192)));
    child.stderr!.on('data', (c) => (out = (out + c.toString('utf8')).slice(-8192)));
    child.on('error', (e) => reject(scanError(`${bin}: ${e.message}`)));
    child.on('close', (code, sig) => {
      if (sig)
        reject(
          sig === 'SIGKILL' && !signal?.aborted
            ? new AppError('timeout', { seconds: Math.round(timeoutMs / 1000) }, undefined, `${bin} timed out`)
            : scanError(`${bin} was stopped (${sig})`),
        );
      else resolve({ code, out });
    });
    if (stdin && child.stdin) {
      child.stdin.on('error', () => undefined); // clamscan may stop reading early; its exit code decides
      pipeFrom(stdin, child.stdin, (e) => child.kill('SIGKILL') && reject(scanError(`reading the file failed: ${e.message}`)));
    }
  });
}

const reasonOf = (e: unknown): string => (e instanceof AppError ? String(e.params.reason ?? e.message) : e instanceof Error ? e.message : String(e));
