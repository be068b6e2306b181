/**
 * The hot replies of an SFTP channel (STATUS OK to a WRITE, DATA to a READ),
 * gathered for one turn of the event loop and sent packed into full SSH
 * packets. ssh2 sends each reply as its own SSH packet: a 32 KiB READ's
 * answer (32 KiB + 13 bytes) becomes two packets, a WRITE's 21-byte OK one
 * more, each with its own allocation, encryption, random padding and socket
 * write. Packed, a 1 GiB upload's 32,768 OKs leave in a few hundred packets
 * and a download's answers in one packet per 32 KiB, as OpenSSH's channel
 * layer does.
 *
 * This writes below ssh2's SFTP API, through the channel fields of ssh2 1.x
 * (`Channel` below), and only when ssh2 holds nothing queued and the peer's
 * window takes the replies whole; otherwise the replies go through ssh2's own
 * `status`/`data`, which queue them behind what it holds (the byte stream is
 * never interleaved mid-packet). Replies to one request are never reordered
 * against each other; SFTP allows replies to different requests in any order.
 */
import ssh2, { type SFTPWrapper } from 'ssh2';

const { STATUS_CODE: S } = ssh2.utils.sftp;
const STATUS = 101;
const DATA = 103;
/** uint32 length, byte type, uint32 id, uint32 code, string message (empty), string language (empty). */
const OK_BYTES = 4 + 1 + 4 + 4 + 4 + 4;
/** uint32 length, byte type, uint32 id, uint32 data length; then the data. */
const DATA_HEAD = 4 + 1 + 4 + 4;

/** The fields of ssh2's SFTP server object (1.x) that sending below its API needs. */
interface Channel {
  _protocol: { channelData(id: number, data: Buffer): void };
  _buffer: unknown[];
  outgoing: { id: number; window: number; packetSize: number; state: string };
}

type Reply = { reqid: number; data: Buffer | null };

export class Replies {
  private queue: Reply[] = [];
  private bytes = 0;
  private scheduled = false;
  private readonly ch: Channel | null;
  private scratch: Buffer | null = null;

  constructor(private sftp: SFTPWrapper) {
    const c = sftp as unknown as Channel;
    // Another ssh2 than the one this was written against: ssh2's own replies only.
    this.ch = typeof c._protocol?.channelData === 'function' && Array.isArray(c._buffer) && typeof c.outgoing?.window === 'number' ? c : null;
  }

  /** STATUS OK to `reqid`, sent with this turn's other replies. */
  ok(reqid: number): void {
    this.add({ reqid, data: null }, OK_BYTES);
  }

  /** DATA `data` to `reqid` (copied out before the next turn: the caller may reuse its buffer after that). */
  data(reqid: number, data: Buffer): void {
    this.add({ reqid, data }, DATA_HEAD + data.length);
  }

  private add(r: Reply, bytes: number): void {
    this.queue.push(r);
    this.bytes += bytes;
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /** Sends what is queued: packed where the window takes it whole, else through ssh2's queue. Never throws. */
  private flush(): void {
    const queue = this.queue;
    const bytes = this.bytes;
    this.queue = [];
    this.bytes = 0;
    this.scheduled = false;
    try {
      const ch = this.ch;
      if (ch && ch.outgoing.state === 'open' && ch._buffer.length === 0 && ch.outgoing.window >= bytes) this.packed(ch, queue, bytes);
      else for (const r of queue) r.data ? this.sftp.data(r.reqid, r.data) : this.sftp.status(r.reqid, S.OK);
    } catch {
      // The channel closed under the replies: nothing left to tell.
    }
  }

  /** Writes the replies as one byte stream cut into packets of the peer's maximum size. */
  private packed(ch: Channel, queue: Reply[], bytes: number): void {
    const size = ch.outgoing.packetSize;
    if (this.scratch?.length !== size) this.scratch = Buffer.allocUnsafe(size);
    const out = this.scratch;
    let used = 0;
    const emit = () => {
      ch._protocol.channelData(ch.outgoing.id, used === size ? out : out.subarray(0, used));
      used = 0;
    };
    /** Appends `src` to the stream, sending each packet as it fills (channelData copies it at once). */
    const put = (src: Buffer) => {
      for (let at = 0; at < src.length; ) {
        const n = src.copy(out, used, at);
        used += n;
        at += n;
        if (used === size) emit();
      }
    };
    const head = Buffer.allocUnsafe(OK_BYTES);
    for (const r of queue) {
      if (r.data) {
        head.writeUInt32BE(DATA_HEAD - 4 + r.data.length, 0);
        head[4] = DATA;
        head.writeUInt32BE(r.reqid, 5);
        head.writeUInt32BE(r.data.length, 9);
        put(head.subarray(0, DATA_HEAD));
        put(r.data);
      } else {
        head.writeUInt32BE(OK_BYTES - 4, 0);
        head[4] = STATUS;
        head.writeUInt32BE(r.reqid, 5);
        head.writeUInt32BE(S.OK, 9);
        head.writeUInt32BE(0, 13);
        head.writeUInt32BE(0, 17);
        put(head);
      }
    }
    if (used > 0) emit();
    ch.outgoing.window -= bytes;
  }
}
