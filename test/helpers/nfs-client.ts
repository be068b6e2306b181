/**
 * A tiny ONC RPC client over TCP for the NFS gateway's tests and bench: one
 * connection, calls pipelined by xid, built on the gateway's own XDR codec.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { XdrReader, XdrWriter } from '../../server/gateways/nfs/xdr';

export const NFS = 100003;
export const MOUNT = 100005;

export class RpcClient {
  private xid = 1;
  private waiting = new Map<number, (r: XdrReader) => void>();
  /** Bytes received and not yet parsed, kept as chunks (a 1 MiB reply arrives in many). */
  private chunks: Buffer[] = [];
  private have = 0;
  closed: Promise<void>;

  private constructor(readonly socket: Socket) {
    socket.on('data', (d) => this.take(d));
    this.closed = new Promise((r) => socket.on('close', () => r()));
    socket.on('error', () => undefined);
  }

  static open(port: number): Promise<RpcClient> {
    return new Promise((resolve, reject) => {
      // No Nagle, as the kernel's and libnfs's RPC clients: a pipelined call must not wait for the last one's ACK.
      const s = connect({ host: '127.0.0.1', port, noDelay: true }, () => resolve(new RpcClient(s)));
      s.once('error', reject);
    });
  }

  private take(d: Buffer): void {
    this.chunks.push(d);
    this.have += d.length;
    for (;;) {
      if (this.have < 4) return;
      if (this.chunks[0].length < 4) this.chunks = [Buffer.concat(this.chunks)];
      const len = this.chunks[0].readUInt32BE(0) & 0x7fffffff;
      if (this.have < 4 + len) return;
      const all = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
      const rec = all.subarray(4, 4 + len);
      const rest = all.subarray(4 + len);
      this.chunks = rest.length ? [rest] : [];
      this.have = rest.length;
      const r = new XdrReader(rec);
      const xid = r.u32();
      this.waiting.get(xid)?.(r);
      this.waiting.delete(xid);
    }
  }

  /** Sends raw bytes (a record mark of your own, garbage…). */
  raw(b: Buffer): void {
    this.socket.write(b);
  }

  /**
   * Calls a procedure with AUTH_SYS uid/gid 1000; resolves with the reader past the accept status and that status.
   * `data`: opaque bytes that end the arguments (a WRITE's), sent as they are rather than copied into the call.
   */
  call(prog: number, proc: number, args: (w: XdrWriter) => void = () => undefined, vers = 3, data?: Buffer): Promise<{ accept: number; r: XdrReader }> {
    const xid = this.xid++;
    const cred = new XdrWriter().u32(0).string('test').u32(1000).u32(1000).u32(0).done();
    const w = new XdrWriter().u32(0).u32(xid).u32(0).u32(2).u32(prog).u32(vers).u32(proc).u32(1).opaque(cred).u32(0).u32(0);
    args(w);
    if (data) w.u32(data.length);
    const out = w.done();
    const pad = data ? (4 - (data.length & 3)) & 3 : 0;
    out.writeUInt32BE((0x80000000 | (out.length - 4 + (data?.length ?? 0) + pad)) >>> 0, 0);
    return new Promise((resolve, reject) => {
      this.waiting.set(xid, (r) => {
        r.u32(); // REPLY
        if (r.u32() !== 0) return resolve({ accept: -1, r });
        r.u32();
        r.opaque(400);
        resolve({ accept: r.u32(), r });
      });
      this.closed.then(() => reject(new Error('connection closed')));
      this.socket.cork();
      this.socket.write(out);
      if (data) this.socket.write(pad ? Buffer.concat([data, Buffer.alloc(pad)]) : data);
      this.socket.uncork();
    });
  }

  close(): void {
    this.socket.destroy();
  }
}

/** MNT → the root handle (asserts success). */
export async function mountRoot(c: RpcClient, path: string): Promise<Buffer> {
  const m = await c.call(MOUNT, 1, (w) => w.string(path));
  assert.equal(m.accept, 0);
  assert.equal(m.r.u32(), 0, `MNT ${path}`);
  return Buffer.from(m.r.opaque(64));
}

/** diropargs3: a folder's handle and a name. */
export const dirop = (w: XdrWriter, dir: Buffer, name: string): XdrWriter => w.opaque(dir).string(name);
