/**
 * The answers to an upload's WRITEs (STATUS OK), gathered for one turn of the
 * event loop and sent packed into full SSH packets. ssh2 sends each answer as
 * its own SSH packet: each 21-byte OK costs an allocation, an encryption,
 * random padding and a socket write, 32,768 of them for a 1 GiB upload.
 * Packed, they leave in a few hundred packets, as OpenSSH's channel layer
 * sends them. (READ's answers are not packed: measured, packing them cost a
 * download more CPU than it saved.)
 *
 * This writes below ssh2's SFTP API, through the channel fields of ssh2 1.x
 * (`Channel` below), and only when ssh2 holds nothing queued and the peer's
 * window takes the replies whole; otherwise the replies go through ssh2's own
 * `status`, which queues them behind what it holds (the byte stream is never
 * interleaved mid-packet). SFTP allows replies to different requests in any
 * order.
 */
import ssh2, { type SFTPWrapper } from 'ssh2';

const { STATUS_CODE: S } = ssh2.utils.sftp;
const STATUS = 101;
/** uint32 length, byte type, uint32 id, uint32 code, string message (empty), string language (empty). */
const OK_BYTES = 4 + 1 + 4 + 4 + 4 + 4;

/** The fields of ssh2's SFTP server object (1.x) that sending below its API needs. */
interface Channel {
  _protocol: { channelData(id: number, data: Buffer): void };
  _buffer: unknown[];
  outgoing: { id: number; window: number; packetSize: number; state: string };
}

export class Replies {
  private queue: number[] = [];
  private scheduled = false;
  private readonly ch: Channel | null;
  private scratch: Buffer | null = null;

  constructor(private sftp: SFTPWrapper) {
    const c = sftp as unknown as Channel;
    // Another ssh2 than the one this was written against: ssh2's own replies only.
    this.ch = typeof c._protocol?.channelData === 'function' && Array.isArray(c._buffer) && typeof c.outgoing?.window === 'number' ? c : null;
  }

  /** STATUS OK to `reqid`, sent with this turn's other OKs. */
  ok(reqid: number): void {
    this.queue.push(reqid);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /** Sends what is queued: packed where the window takes it whole, else through ssh2's queue. Never throws. */
  private flush(): void {
    const queue = this.queue;
    const bytes = queue.length * OK_BYTES;
    this.queue = [];
    this.scheduled = false;
    try {
      const ch = this.ch;
      if (ch && ch.outgoing.state === 'open' && ch._buffer.length === 0 && ch.outgoing.window >= bytes) this.packed(ch, queue, bytes);
      else for (const reqid of queue) this.sftp.status(reqid, S.OK);
    } catch {
      // The channel closed under the replies: nothing left to tell.
    }
  }

  /** Writes the OKs as one byte stream cut into packets of the peer's maximum size. */
  private packed(ch: Channel, queue: number[], bytes: number): void {
    const size = ch.outgoing.packetSize;
    if (this.scratch?.length !== size) this.scratch = Buffer.allocUnsafe(size);
    const out = this.scratch;
    let used = 0;
    const emit = () => {
      ch._protocol.channelData(ch.outgoing.id, used === size ? out : out.subarray(0, used));
      used = 0;
    };
    const ok = Buffer.allocUnsafe(OK_BYTES);
    ok.writeUInt32BE(OK_BYTES - 4, 0);
    ok[4] = STATUS;
    ok.writeUInt32BE(S.OK, 9);
    ok.writeUInt32BE(0, 13);
    ok.writeUInt32BE(0, 17);
    for (const reqid of queue) {
      ok.writeUInt32BE(reqid, 5);
      // An OK may straddle two packets: the stream is cut at the packet size (channelData copies at once).
      for (let at = 0; at < OK_BYTES; ) {
        const n = ok.copy(out, used, at);
        used += n;
        at += n;
        if (used === size) emit();
      }
    }
    if (used > 0) emit();
    ch.outgoing.window -= bytes;
  }
}
