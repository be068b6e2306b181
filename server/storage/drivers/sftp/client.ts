/**
 * One SSH connection with its SFTP channel, and promise-shaped SFTP requests
 * that can never hang: every request is bounded by the configured timeout,
 * and a request on a session that already closed fails at once (ssh2 would
 * silently drop it).
 */
import { Client, type FileEntry, type SFTPWrapper, type Stats } from 'ssh2';
import { AppError } from '../../../errors';
import type { SftpConfig } from './config';
import { fromConnect, SFTP_STATUS, unreachable } from './errors';
import { hostKeyAlgorithms, hostKeyVerifier } from './host-keys';

/** Keep-alive probes catch a silently dead peer (a NAT that dropped the flow, a suspended server). */
const KEEPALIVE_MS = 15_000;
const KEEPALIVE_MAX_MISSED = 3;

/** ssh2's own write size for servers that state no limits (34,000-byte packets less its 2 KiB overhead). */
const SSH2_SAFE_WRITE_BYTES = 34_000 - 2048;

type Done<T> = (err: Error | null | undefined, value?: T) => void;

export class SftpSession {
  /** Requests and streams currently using this session (the pool's load measure). */
  busy = 0;
  closed = false;
  idleTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly client: Client,
    readonly sftp: SFTPWrapper,
    readonly timeoutMs: number,
  ) {
    const markClosed = (): void => {
      this.closed = true;
    };
    client.on('close', markClosed);
    client.on('end', markClosed);
    sftp.on('close', markClosed);
    // An 'error' event without a listener would crash the process; the close that follows is what we act on.
    sftp.on('error', markClosed);
  }

  /**
   * Sends one request; resolves with its result. A closed session or no answer
   * within the timeout → `storage_unreachable` (and a timeout ends the session,
   * since a connection that stops answering is not worth keeping).
   */
  call<T>(what: string, start: (done: Done<T>) => void): Promise<T> {
    if (this.closed) return Promise.reject(unreachable(`connection lost before ${what}`, 'lost'));
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.end();
        reject(unreachable(`timed out after ${this.timeoutMs / 1000}s: ${what}`, 'timeout'));
      }, this.timeoutMs);
      start((err, value) => {
        clearTimeout(timer);
        if (err) reject(err);
        else resolve(value as T);
      });
    });
  }

  /**
   * The largest write one request carries on this connection (ssh2 learns it from
   * the server's limits@openssh.com, else assumes a conservative size; it keeps
   * the figure in a private field), so callers can send pieces of it in parallel.
   */
  get maxWriteBytes(): number {
    const n = (this.sftp as unknown as { _maxWriteLen?: unknown })._maxWriteLen;
    return typeof n === 'number' && n > 0 ? n : SSH2_SAFE_WRITE_BYTES;
  }

  stat = (path: string) => this.call<Stats>(`stat ${path}`, (cb) => this.sftp.stat(path, cb));
  lstat = (path: string) => this.call<Stats>(`lstat ${path}`, (cb) => this.sftp.lstat(path, cb));
  fstat = (handle: Buffer) => this.call<Stats>('fstat', (cb) => this.sftp.fstat(handle, cb));
  open = (path: string, flags: 'r' | 'w') => this.call<Buffer>(`open ${path}`, (cb) => this.sftp.open(path, flags, cb));
  close = (handle: Buffer) => this.call<void>('close', (cb) => this.sftp.close(handle, cb));
  opendir = (path: string) => this.call<Buffer>(`opendir ${path}`, (cb) => this.sftp.opendir(path, cb));
  mkdir = (path: string) => this.call<void>(`mkdir ${path}`, (cb) => this.sftp.mkdir(path, cb));
  rmdir = (path: string) => this.call<void>(`rmdir ${path}`, (cb) => this.sftp.rmdir(path, cb));
  unlink = (path: string) => this.call<void>(`unlink ${path}`, (cb) => this.sftp.unlink(path, cb));
  /** Plain SFTP rename: OpenSSH refuses (FAILURE) when the target exists. */
  rename = (from: string, to: string) => this.call<void>(`rename ${from}`, (cb) => this.sftp.rename(from, to, cb));

  /** One batch of a folder's entries (without `.` and `..`); null at the end of the folder. */
  async readdir(handle: Buffer): Promise<FileEntry[] | null> {
    try {
      return await this.call<FileEntry[]>('readdir', (cb) => this.sftp.readdir(handle, cb));
    } catch (e) {
      if ((e as { code?: unknown }).code === SFTP_STATUS.EOF) return null;
      throw e;
    }
  }

  /**
   * rename(2) semantics (replaces an existing target atomically) through the
   * posix-rename@openssh.com extension; resolves false when the server does
   * not offer it, so the caller can fall back.
   */
  async posixRename(from: string, to: string): Promise<boolean> {
    try {
      await this.call<void>(`rename ${from}`, (cb) => this.sftp.ext_openssh_rename(from, to, cb));
      return true;
    } catch (e) {
      if (e instanceof Error && e.message === 'Server does not support this extended request') return false;
      throw e;
    }
  }

  /** Ends the connection without waiting. Idempotent. */
  end(): void {
    this.closed = true;
    clearTimeout(this.idleTimer);
    this.client.end();
  }
}

/** Connects, checks the host key, authenticates and opens the SFTP channel, all within the connect timeout. */
export function openSession(cfg: SftpConfig): Promise<SftpSession> {
  const where = `${cfg.host}:${cfg.port}`;
  return new Promise((resolve, reject) => {
    const client = new Client();
    const verifier = hostKeyVerifier(cfg.hostKeys, cfg.host, cfg.port);
    let settled = false;
    const fail = (err: unknown): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      client.end();
      reject(fromConnect(err, where, cfg.user, verifier.refusal(), cfg.connectTimeoutMs));
    };
    // Same shape as ssh2's own readyTimeout error, which only covers the handshake, not the SFTP channel.
    const timer = setTimeout(() => fail(Object.assign(new Error('timed out'), { level: 'client-timeout' })), cfg.connectTimeoutMs);
    // Stays attached for the connection's life: later errors surface as 'close' on the session.
    client.on('error', fail);
    client.once('close', () => fail(new Error('connection closed during setup')));
    client.once('ready', () => {
      client.sftp((err, sftp) => {
        if (err) return fail(err);
        if (settled) return void client.end();
        settled = true;
        clearTimeout(timer);
        resolve(new SftpSession(client, sftp, cfg.timeoutMs));
      });
    });
    try {
      client.connect({
        host: cfg.host,
        port: cfg.port,
        username: cfg.user,
        password: cfg.password,
        privateKey: cfg.privateKey,
        tryKeyboard: false,
        readyTimeout: cfg.connectTimeoutMs,
        keepaliveInterval: KEEPALIVE_MS,
        keepaliveCountMax: KEEPALIVE_MAX_MISSED,
        hostVerifier: (key: Buffer) => verifier.verify(key),
        algorithms: { serverHostKey: hostKeyAlgorithms(cfg.hostKeys, cfg.host, cfg.port) },
      });
    } catch (e) {
      // ssh2 throws synchronously for a key it cannot parse.
      settled = true;
      clearTimeout(timer);
      const reason = (e as Error).message;
      reject(new AppError('validation_failed', { field: 'private_key', reason }, { field: 'private_key', reason }));
    }
  });
}
