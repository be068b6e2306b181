/**
 * The smbclient process runner. Every call is one short-lived `smbclient`
 * process taken from a bounded pool, with credentials in a 0600 auth file
 * (`-A`, never on the command line), a deadline, and a kill on abort. Bodies
 * stream through stdin (`put -`) and stdout (`get -`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { AppError, isAppError } from '../../../errors';
import { pipeFrom } from '../../../lib/streams';
import { findStatus, statusError } from './errors';
import { ProcessPool } from './pool';

export interface SmbTarget {
  host: string;
  port: number;
  share: string;
  user: string;
  password: string;
  domain: string;
}

export interface SmbTimeouts {
  /** Deadline of one command process, queueing for a slot included. */
  commandMs: number;
  /** A body stream that moves no byte for this long is killed. */
  idleMs: number;
}

/** At most this many smbclient processes per storage. */
export const POOL_SIZE = 3;

const unreachable = (reason: string) => new AppError('storage_unreachable', { reason }, { reason });

export class SmbClient {
  private readonly pool = new ProcessPool(POOL_SIZE);
  private authWritten = false;

  constructor(
    private readonly target: SmbTarget,
    private readonly authFile: string,
    readonly timeouts: SmbTimeouts,
  ) {}

  /**
   * Runs `-c <commands>` and returns stdout. Throws the mapped error when the
   * output carries an NT_STATUS (smbclient keeps going after a failed command,
   * and some commands fail with exit code 0), `storage_unreachable` on a
   * deadline or a failed exit, `cancelled` on abort.
   */
  async run(commands: string, opts: { path?: string; signal?: AbortSignal } = {}): Promise<string> {
    const deadline = Date.now() + this.timeouts.commandMs;
    const release = await this.pool.acquire(this.timeouts.commandMs, opts.signal);
    try {
      const child = this.spawn(commands, 'ignore');
      const chunks: Buffer[] = [];
      child.stdout!.on('data', (c: Buffer) => chunks.push(c));
      child.stderr!.on('data', (c: Buffer) => chunks.push(c));
      const code = await this.settle(child, deadline - Date.now(), opts.signal);
      const output = Buffer.concat(chunks).toString('utf8');
      const status = findStatus(output);
      if (status) throw statusError(status, opts.path);
      if (code !== 0) throw unreachable(lastLine(output) || `smbclient exited with ${code}`);
      return output;
    } finally {
      release();
    }
  }

  /**
   * Streams a file's bytes from `get <path> -`. Resolves once the first byte
   * arrives or the (empty) file is complete, so a missing file rejects here
   * rather than in the stream. A transfer the server cuts short ends the stream
   * with `storage_unreachable`, never with a clean end. `limit` stops after
   * that many bytes (after skipping `skip`): smbclient has no ranged get.
   */
  async get(path: string, arg: string, opts: { skip: number; limit?: number; signal?: AbortSignal }): Promise<Readable> {
    const release = await this.pool.acquire(this.timeouts.commandMs, opts.signal);
    let child: ChildProcess;
    try {
      // -E: messages to stderr, so stdout carries nothing but the file's bytes.
      child = this.spawn(`get ${arg} -`, 'ignore', true);
    } catch (e) {
      release();
      throw e;
    }
    const out = new PassThrough({ highWaterMark: 1 << 20 });
    let stderr = '';
    let skip = opts.skip;
    let left = opts.limit ?? Infinity;
    let received = 0;
    let cut = false;
    const idle = new IdleTimer(this.timeouts.idleMs, () => finish(unreachable('smb read stalled')));
    const onAbort = () => finish(new AppError('cancelled'));
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    let finished = false;
    const finish = (err: AppError | null) => {
      if (finished) return;
      finished = true;
      idle.stop();
      opts.signal?.removeEventListener('abort', onAbort);
      if (child.exitCode === null) child.kill('SIGKILL');
      release();
      if (err) out.destroy(err);
      else out.end();
    };
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.stdout!.on('data', (c: Buffer) => {
      idle.touch();
      received += c.length;
      if (cut) return;
      if (skip >= c.length) {
        skip -= c.length;
        return;
      }
      let piece = skip > 0 ? c.subarray(skip) : c;
      skip = 0;
      if (piece.length >= left) {
        piece = piece.subarray(0, left);
        cut = true;
      }
      left -= piece.length;
      if (!out.write(piece)) child.stdout!.pause();
      if (cut) finish(null);
    });
    out.on('drain', () => child.stdout!.resume());
    // The consumer went away: stop the transfer and free the slot.
    out.on('close', () => finish(new AppError('cancelled')));

    const opened = new Promise<void>((resolve, reject) => {
      child.stdout!.once('data', () => resolve());
      // A failed spawn is followed by 'close' (code < 0), which reports it.
      let spawnError: string | null = null;
      child.once('error', (e) => (spawnError = spawnFailure(e)));
      child.once('close', (code) => {
        const status = findStatus(stderr);
        const declared = /getting file .* of size (\d+) as/.exec(stderr);
        const short = declared !== null && Number(declared[1]) !== received;
        let err: AppError | null = null;
        if (spawnError) err = unreachable(spawnError);
        else if (status) err = statusError(status, path);
        else if (code !== 0 && !cut) err = unreachable(lastLine(stderr) || `smbclient exited with ${code}`);
        else if (short && !cut) err = unreachable('smb read ended early');
        if (err && received === 0) {
          finished = true;
          idle.stop();
          opts.signal?.removeEventListener('abort', onAbort);
          release();
          reject(err);
          return;
        }
        resolve();
        finish(err);
      });
    });
    await opened;
    return out;
  }

  /**
   * Uploads `body` with `put - <path>`. Resolves with the byte count once
   * smbclient has closed the file. On a body error, an abort or a deadline the
   * process is killed and the error is thrown; the caller removes the temp file.
   */
  async put(path: string, arg: string, body: Readable, signal?: AbortSignal): Promise<number> {
    const release = await this.pool.acquire(this.timeouts.commandMs, signal);
    try {
      const child = this.spawn(`put - ${arg}`, 'pipe');
      let output = '';
      let bytes = 0;
      let failure: AppError | null = null;
      const idle = new IdleTimer(this.timeouts.idleMs, () => fail(unreachable('smb write stalled')));
      const fail = (err: AppError) => {
        failure ??= err;
        child.kill('SIGKILL');
      };
      const onAbort = () => fail(new AppError('cancelled'));
      signal?.addEventListener('abort', onAbort, { once: true });
      child.stdout!.on('data', (c: Buffer) => (output += c.toString('utf8')));
      child.stderr!.on('data', (c: Buffer) => (output += c.toString('utf8')));
      // EPIPE when smbclient quits early (for example a missing parent): its own message wins.
      child.stdin!.on('error', () => undefined);
      const onData = (c: Buffer | string) => {
        idle.touch();
        bytes += typeof c === 'string' ? Buffer.byteLength(c) : c.length;
      };
      const onError = (e: Error) => fail(isAppError(e) ? e : new AppError('cancelled', {}, undefined, e.message));
      body.on('data', onData);
      pipeFrom(body, child.stdin!, onError);
      const code = await new Promise<number | null>((resolve) => {
        child.once('error', (e) => {
          failure ??= unreachable(spawnFailure(e));
          resolve(null);
        });
        child.once('close', resolve);
      });
      idle.stop();
      signal?.removeEventListener('abort', onAbort);
      body.off('data', onData);
      body.off('error', onError);
      body.unpipe(child.stdin!);
      if (failure) throw failure;
      const status = findStatus(output);
      if (status) throw statusError(status, path);
      if (code !== 0) throw unreachable(lastLine(output) || `smbclient exited with ${code}`);
      if (!body.readableEnded) throw unreachable('smbclient stopped reading the upload');
      return bytes;
    } finally {
      release();
    }
  }

  /** Removes the auth file. Idempotent. */
  close(): void {
    rmSync(this.authFile, { force: true });
    this.authWritten = false;
  }

  private spawn(commands: string, stdin: 'ignore' | 'pipe', messagesToStderr = false): ChildProcess {
    this.writeAuth();
    const t = this.target;
    const ipv6 = t.host.includes(':');
    const args = [
      ...(messagesToStderr ? ['-E'] : []),
      `//${ipv6 ? 'server' : t.host}/${t.share}`,
      ...(ipv6 ? ['-I', t.host] : []),
      '-p',
      String(t.port),
      '-A',
      this.authFile,
      '-t',
      String(Math.max(1, Math.ceil(this.timeouts.commandMs / 1000))),
      '-c',
      commands,
    ];
    // TZ=UTC: listing times are printed in the process's local zone.
    return spawn('smbclient', args, {
      stdio: [stdin, 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', TZ: 'UTC', LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8' },
    });
  }

  private writeAuth(): void {
    if (this.authWritten) return;
    mkdirSync(dirname(this.authFile), { recursive: true, mode: 0o700 });
    const t = this.target;
    writeFileSync(this.authFile, `username = ${t.user}\npassword = ${t.password}\ndomain = ${t.domain}\n`, { mode: 0o600 });
    this.authWritten = true;
  }

  /** Waits for exit; kills on deadline or abort. */
  private settle(child: ChildProcess, ms: number, signal?: AbortSignal): Promise<number | null> {
    return new Promise((resolve, reject) => {
      let err: AppError | null = null;
      const kill = (e: AppError) => {
        err ??= e;
        child.kill('SIGKILL');
      };
      const timer = setTimeout(() => kill(unreachable('smb call timed out')), Math.max(1, ms));
      const onAbort = () => kill(new AppError('cancelled'));
      signal?.addEventListener('abort', onAbort, { once: true });
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      child.once('error', (e) => {
        done();
        reject(unreachable(spawnFailure(e)));
      });
      child.once('close', (code) => {
        done();
        if (err) reject(err);
        else resolve(code);
      });
    });
  }
}

/** Calls `onIdle` when `touch` has not been called for `ms`. */
class IdleTimer {
  private last = Date.now();
  private readonly timer: NodeJS.Timeout;

  constructor(ms: number, onIdle: () => void) {
    this.timer = setInterval(
      () => {
        if (Date.now() - this.last >= ms) onIdle();
      },
      Math.min(ms, 1000),
    );
    this.timer.unref();
  }

  touch(): void {
    this.last = Date.now();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

const spawnFailure = (e: Error): string => ((e as NodeJS.ErrnoException).code === 'ENOENT' ? 'smbclient is not installed' : e.message);

const lastLine = (s: string): string => s.trim().split('\n').pop()?.trim() ?? '';
