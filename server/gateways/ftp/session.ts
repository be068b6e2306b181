/**
 * One FTP control connection: reads command lines, runs them one at a time
 * (ABOR also cuts the running transfer at once), and holds the session state
 * (TLS, PROT, the signed-in tree, the working folder, REST, RNFR, the passive
 * channel). The commands themselves are in commands.ts. Explicit TLS only:
 * `AUTH TLS` upgrades this socket in place; without it, only a loopback client
 * may sign in or transfer.
 */
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';
import { TLSSocket, type SecureContext } from 'node:tls';
import { AppError, isAppError } from '../../errors';
import type { Logger } from '../../lib/log';
import { treePath, type GatewayCore, type GatewayTree } from '..';
import { COMMANDS, PRE_LOGIN } from './commands';
import { DataChannel, type PassivePorts } from './passive';
import { loginReply, replyFor } from './replies';

/** Longest command line accepted (a path of 8 KiB plus the verb). */
const MAX_LINE = 8300;
/** Commands a client may send ahead of the replies before it is cut off. */
const MAX_PENDING = 64;
/** Time to sign in after connecting. */
const LOGIN_MS = 60_000;
/** Failed sign-ins on one connection before it is closed (the throttle still counts per account and address). */
const MAX_LOGIN_FAILS = 3;

export interface FtpContext {
  core: GatewayCore;
  tls: SecureContext;
  ports: PassivePorts;
  /** The address PASV announces ('' = this connection's local address). */
  pasvAddress: string;
  idleMs: number;
  log: Logger;
  /** Called once per connection when it signs in or closes, whichever comes first (see index.ts). */
  signedInOrGone(ip: string): void;
}

export const isLoopback = (ip: string | undefined): boolean => !!ip && (ip === '::1' || /^(::ffff:)?127\./.test(ip));

/** How long the control connection must outlive an upload's data connection for the upload to count. */
const UPLOAD_GRACE_MS = 50;

export class FtpSession {
  readonly ip: string;
  readonly loopback: boolean;
  secure = false;
  protP = false;
  user = '';
  tree: GatewayTree | null = null;
  cwd = '/';
  rest = 0;
  renameFrom: string | null = null;
  private io: Socket | TLSSocket;
  private passive: DataChannel | null = null;
  private transferring: AbortController | null = null;
  private chain: Promise<void> = Promise.resolve();
  private pending = 0;
  private buf: Buffer = Buffer.alloc(0);
  private gone = false;
  private fails = 0;
  private release: (() => void) | null = null;
  private counted = true;

  constructor(
    private raw: Socket,
    readonly ctx: FtpContext,
  ) {
    this.io = raw;
    this.ip = raw.remoteAddress ?? '';
    this.loopback = isLoopback(this.ip);
    raw.setNoDelay(true);
    raw.on('data', this.onData);
    raw.on('error', () => raw.destroy());
    raw.on('end', () => void (this.gone = true));
    raw.on('close', () => this.closed());
    raw.on('timeout', () => this.idle());
    raw.setTimeout(LOGIN_MS);
    this.reply(220, 'Filedock FTP ready');
  }

  /** Writes a reply; lines after the first make it a multi-line reply. */
  reply(code: number, text: string, more: string[] = []): void {
    if (this.gone || this.io.destroyed) return;
    if (!more.length) return void this.io.write(`${code} ${text}\r\n`);
    this.io.write(`${code}-${text}\r\n${more.map((l) => ` ${l}\r\n`).join('')}${code} End\r\n`);
  }

  /** A client path as a tree path (`bad_path` for NUL and backslashes; `..` never climbs above `/`). */
  path(arg: string): string {
    return treePath(arg, { cwd: this.cwd, dots: 'resolve' });
  }

  /** `AUTH TLS`: answers 234, then speaks TLS on the same socket. */
  startTls(): void {
    this.reply(234, 'Proceed with TLS negotiation');
    this.raw.off('data', this.onData);
    this.buf = Buffer.alloc(0);
    const t = new TLSSocket(this.raw, { isServer: true, secureContext: this.ctx.tls });
    t.on('data', this.onData);
    // The TLS layer reads the socket now: the client's end shows here, not on the raw socket.
    t.on('end', () => void (this.gone = true));
    t.on('error', () => this.raw.destroy());
    this.io = t;
    this.secure = true;
  }

  /** `PASS`: signs in through the gateway core (throttle, audit, key tokens). */
  async login(password: string): Promise<void> {
    if (!this.user) return this.reply(503, 'Login with USER first');
    try {
      const actor = await this.ctx.core.auth.signIn(this.user, password, { ip: this.ip, ua: 'ftp' }, 'ftp');
      this.tree = this.ctx.core.tree(actor, 'ftp');
      this.release = this.ctx.core.registry.open('ftp', this.tree.who, this.ip);
      this.uncount();
      this.raw.setTimeout(this.ctx.idleMs);
      this.reply(230, 'Logged in');
    } catch (e) {
      const r = loginReply(e);
      this.reply(r.code, r.text);
      if (++this.fails >= MAX_LOGIN_FAILS) this.raw.end();
    }
  }

  /** `PASV` / `EPSV`: a new passive channel (the previous one is dropped); answers its port. */
  async openPassive(extended: boolean): Promise<void> {
    this.passive?.close();
    this.passive = null;
    const local = (this.raw.localAddress ?? '').replace(/^::ffff:/, '');
    const announced = this.ctx.pasvAddress || local;
    if (!extended && !/^\d+\.\d+\.\d+\.\d+$/.test(announced)) return this.reply(425, 'Cannot announce this address with PASV: use EPSV');
    const server = await this.ctx.ports.listen(this.raw.localAddress ?? local);
    this.passive = new DataChannel(server, this.ip, () => (this.protP ? this.ctx.tls : null));
    const port = this.passive.port;
    if (extended) this.reply(229, `Entering Extended Passive Mode (|||${port}|)`);
    else this.reply(227, `Entering Passive Mode (${announced.split('.').join(',')},${port >> 8},${port & 255})`);
  }

  /**
   * Runs a transfer over the passive channel: 150, the data connection, then
   * 226, or the error's reply (426 when aborted or the connection broke).
   * Outside loopback the data must be protected (PROT P).
   */
  async transfer(what: string, run: (sock: Socket, signal: AbortSignal) => Promise<void>): Promise<void> {
    if (!this.loopback && !this.protP) return this.reply(521, 'Data connections must be protected: send PROT P');
    const ch = this.passive;
    this.passive = null;
    if (!ch) return this.reply(425, 'Use PASV or EPSV first');
    const ac = new AbortController();
    ac.signal.addEventListener('abort', () => ch.close());
    this.transferring = ac;
    try {
      this.reply(150, `Opening ${this.protP ? 'TLS ' : ''}data connection for ${what}`);
      const sock = await ch.connection();
      sock.setTimeout(this.ctx.idleMs, () => sock.destroy(new AppError('timeout')));
      await run(sock, ac.signal);
      this.reply(226, 'Transfer complete');
    } catch (e) {
      const r = replyFor(e);
      if (ac.signal.aborted || !isAppError(e)) this.reply(426, 'Connection closed; transfer aborted');
      else this.reply(r.code, r.text);
    } finally {
      ch.close();
      this.transferring = null;
    }
  }

  /**
   * An upload's body: the data connection's bytes, ending only when the
   * control connection is still there a moment (UPLOAD_GRACE_MS) after the
   * data ends. A client killed mid-upload closes both at once, and its
   * truncated file must not be published; a client that finished keeps its
   * control connection for 226. The moment is long enough for a loaded event
   * loop to have heard the control connection's end (5 ms was not, in CI).
   */
  uploadBody(sock: Socket): Readable {
    const session = this;
    return Readable.from(
      (async function* () {
        for await (const chunk of sock) yield chunk as Buffer;
        await new Promise((r) => setTimeout(r, UPLOAD_GRACE_MS));
        if (session.gone || session.transferring?.signal.aborted) throw new AppError('cancelled');
      })(),
      { objectMode: false },
    );
  }

  /** Closes after the reply is written (QUIT). */
  quit(): void {
    this.reply(221, 'Goodbye');
    this.io.end();
  }

  private onData = (chunk: Buffer): void => {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    for (let nl = this.buf.indexOf(10); nl >= 0 && nl <= MAX_LINE; nl = this.buf.indexOf(10)) {
      const line = this.buf.subarray(0, nl);
      this.buf = this.buf.subarray(nl + 1);
      this.enqueue(decode(line));
    }
    if (this.buf.length > MAX_LINE) {
      this.raw.off('data', this.onData);
      this.io.off('data', this.onData);
      this.chain = this.chain.then(() => {
        this.reply(500, 'Command line too long');
        this.io.end();
      });
    }
  };

  private enqueue(line: string): void {
    const sp = line.indexOf(' ');
    const verb = (sp < 0 ? line : line.slice(0, sp)).toUpperCase();
    const arg = sp < 0 ? '' : line.slice(sp + 1);
    if (verb === 'ABOR') this.transferring?.abort();
    if (++this.pending > MAX_PENDING) return void this.raw.destroy();
    this.chain = this.chain
      .then(() => this.run(verb, arg))
      .catch((e) => this.ctx.log.warn(`ftp ${verb} failed`, e))
      .finally(() => void this.pending--);
  }

  private async run(verb: string, arg: string): Promise<void> {
    if (this.gone) return;
    const cmd = Object.hasOwn(COMMANDS, verb) ? COMMANDS[verb] : undefined;
    if (!cmd) return this.reply(502, 'Command not implemented');
    if (!this.secure && !this.loopback && !PRE_LOGIN.has(verb)) return this.reply(530, 'TLS required: send AUTH TLS first');
    if (!this.tree && !PRE_LOGIN.has(verb) && verb !== 'USER' && verb !== 'PASS') return this.reply(530, 'Please login with USER and PASS');
    if (verb !== 'RNTO') this.renameFrom = null;
    try {
      await cmd(this, arg);
    } catch (e) {
      if (!isAppError(e)) this.ctx.log.warn(`ftp ${verb} failed`, e);
      const r = replyFor(e);
      this.reply(r.code, r.text);
    }
  }

  private idle(): void {
    if (this.transferring) return;
    this.reply(421, 'Timeout: closing control connection');
    this.io.end();
    setTimeout(() => this.raw.destroy(), 1000).unref();
  }

  private uncount(): void {
    if (this.counted) this.ctx.signedInOrGone(this.ip);
    this.counted = false;
  }

  private closed(): void {
    this.gone = true;
    this.uncount();
    this.transferring?.abort();
    this.passive?.close();
    this.release?.();
    this.release = null;
  }
}

/** A command line without its CR and the Telnet IAC sequences some clients put before ABOR. */
function decode(line: Buffer): string {
  let b = line[line.length - 1] === 13 ? line.subarray(0, -1) : line;
  if (b.includes(0xff)) b = Buffer.from([...b].filter((x, i, a) => x !== 0xff && !(i > 0 && a[i - 1] === 0xff)));
  return b.toString('utf8');
}
