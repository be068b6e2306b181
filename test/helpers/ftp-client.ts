/**
 * A small raw FTP(S) client for protocol-level tests: exact replies for each
 * command, explicit TLS (AUTH TLS, PROT P with the control session reused),
 * passive data connections, and the ability to drop both connections mid-way
 * the way a killed client does. Real clients (lftp, rclone) cover the rest.
 */
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';

export interface Reply {
  code: number;
  text: string;
}

export class RawFtp {
  private lines: string[] = [];
  private waiters: Array<() => void> = [];
  private buf = '';
  private io: Socket | TLSSocket;
  private prot = false;

  private constructor(
    private raw: Socket,
    readonly host: string,
  ) {
    this.io = raw;
    raw.setEncoding('utf8');
    raw.on('data', this.onData);
    raw.on('error', () => {});
    raw.on('close', () => this.waiters.splice(0).forEach((w) => w()));
  }

  /** Connects and reads the greeting. */
  static async connect(port: number, host = '127.0.0.1', local?: string): Promise<{ ftp: RawFtp; greeting: Reply }> {
    const raw = netConnect({ port, host, localAddress: local });
    await new Promise((resolve, reject) => raw.once('connect', resolve).once('error', reject));
    const ftp = new RawFtp(raw, host);
    return { ftp, greeting: await ftp.reply() };
  }

  get closed(): boolean {
    return this.raw.destroyed || this.raw.readableEnded;
  }

  /** Sends one command line (raw bytes allowed) and reads its reply. */
  async cmd(line: string): Promise<Reply> {
    this.io.write(line + '\r\n');
    return this.reply();
  }

  /** AUTH TLS, PBSZ 0, PROT P. */
  async secure(): Promise<void> {
    const r = await this.cmd('AUTH TLS');
    if (r.code !== 234) throw new Error(`AUTH TLS: ${r.code} ${r.text}`);
    this.raw.off('data', this.onData);
    const t = tlsConnect({ socket: this.raw, rejectUnauthorized: false });
    await new Promise((resolve, reject) => t.once('secureConnect', resolve).once('error', reject));
    t.setEncoding('utf8');
    t.on('data', this.onData);
    this.io = t;
    await this.cmd('PBSZ 0');
    const p = await this.cmd('PROT P');
    if (p.code !== 200) throw new Error(`PROT P: ${p.code}`);
    this.prot = true;
  }

  async login(user: string, pass: string): Promise<Reply> {
    await this.cmd(`USER ${user}`);
    return this.cmd(`PASS ${pass}`);
  }

  /** EPSV and a connected data socket (TLS when PROT P). */
  async data(): Promise<Socket> {
    const r = await this.cmd('EPSV');
    if (r.code !== 229) throw new Error(`EPSV: ${r.code} ${r.text}`);
    const port = Number(/\|\|\|(\d+)\|/.exec(r.text)![1]);
    const raw = netConnect({ port, host: this.host, localAddress: this.raw.localAddress });
    await new Promise((resolve, reject) => raw.once('connect', resolve).once('error', reject));
    if (!this.prot) return raw;
    const t = tlsConnect({ socket: raw, rejectUnauthorized: false, session: (this.io as TLSSocket).getSession?.() });
    t.on('error', () => {});
    return t;
  }

  /** Runs a download-type command (RETR, LIST, MLSD, NLST): its bytes and its two replies. */
  async read(line: string): Promise<{ first: Reply; last: Reply | null; bytes: Buffer }> {
    const sock = await this.data();
    const chunks: Buffer[] = [];
    sock.on('data', (c: Buffer) => chunks.push(c));
    const ended = new Promise((r) => sock.once('close', r));
    const first = await this.cmd(line);
    if (first.code !== 150) {
      sock.destroy();
      return { first, last: null, bytes: Buffer.alloc(0) };
    }
    await ended;
    return { first, last: await this.reply(), bytes: Buffer.concat(chunks) };
  }

  /** Runs STOR with `body`: the two replies. */
  async store(path: string, body: Buffer, verb = 'STOR'): Promise<{ first: Reply; last: Reply | null }> {
    const sock = await this.data();
    const first = await this.cmd(`${verb} ${path}`);
    if (first.code !== 150) {
      sock.destroy();
      return { first, last: null };
    }
    await new Promise<void>((r) => sock.end(body, () => r()));
    return { first, last: await this.reply() };
  }

  /** Drops the control connection and `others` at once, like a killed client. */
  kill(...others: Socket[]): void {
    for (const s of others) s.destroy();
    this.raw.destroy();
  }

  /** The next complete reply (multi-line aware); a closed connection gives code 0. */
  async reply(): Promise<Reply> {
    const collected: string[] = [];
    for (;;) {
      while (!this.lines.length) {
        if (this.raw.destroyed) return { code: 0, text: 'closed' };
        await new Promise<void>((r) => this.waiters.push(r));
      }
      const line = this.lines.shift()!;
      collected.push(line);
      const m = /^(\d{3})([ -])/.exec(line);
      if (m && m[2] === ' ' && (collected.length === 1 || collected[0].startsWith(m[1]))) {
        return { code: Number(m[1]), text: collected.length === 1 ? line.slice(4) : collected.join('\n') };
      }
    }
  }

  private onData = (s: string): void => {
    this.buf += s;
    let i;
    while ((i = this.buf.indexOf('\r\n')) >= 0) {
      this.lines.push(this.buf.slice(0, i));
      this.buf = this.buf.slice(i + 2);
    }
    this.waiters.splice(0).forEach((w) => w());
  };
}
