/**
 * ONC RPC (RFC 5531) over TCP: record marking (section 11: fragments, the top
 * bit marks the last one), CALL parsing, AUTH_NONE and AUTH_SYS credentials
 * (uid/gid kept for display only: NFSv3 trusts them, we never do), and the
 * replies a program or procedure we do not serve gets. A record longer than
 * MAX_RECORD is never allocated: the connection is closed at its mark.
 * Calls on one connection run concurrently (clients pipeline READs and
 * WRITEs); past MAX_IN_FLIGHT, or while the socket's send buffer is full,
 * the connection stops reading until answers drain.
 */
import type { Socket } from 'node:net';
import type { BufferPool } from './pool';
import { XdrError, XdrReader, XdrWriter } from './xdr';

/** The largest record taken: a 1 MiB WRITE plus its headers. */
export const MAX_RECORD = (1 << 20) + 4096;
const MAX_IN_FLIGHT = 32;
const SEND_HIGH_WATER = 8 << 20;
const LAST_FRAGMENT = 0x8000_0000;

const noop = () => undefined;

export const AUTH_NONE = 0;
export const AUTH_SYS = 1;

export enum Accept {
  SUCCESS = 0,
  PROG_UNAVAIL = 1,
  PROG_MISMATCH = 2,
  PROC_UNAVAIL = 3,
  GARBAGE_ARGS = 4,
  SYSTEM_ERR = 5,
}

/** Who and where a call comes from. */
export interface CallContext {
  /** The peer's address (IPv4 plain, IPv6 as is). */
  ip: string;
  /** AUTH_SYS ids, shown to the admin, never trusted. */
  uid: number | null;
  gid: number | null;
  machine: string | null;
  /**
   * Keeps the call's record (its arguments' buffer) past the answer, until
   * the function returned is called (a WRITE whose bytes are written after
   * it is answered); otherwise it is reused once the call is answered.
   */
  keep: () => () => void;
}

/** A procedure: reads its arguments, returns its result's XDR (parts are sent in order). */
export type Procedure = (args: XdrReader, ctx: CallContext) => Promise<Buffer[]> | Buffer[];

/** One RPC program at one version. */
export interface Program {
  prog: number;
  vers: number;
  procs: Record<number, Procedure>;
}

/** The reply head for `xid` with an accept status (the body, if any, follows). */
export function replyHead(xid: number, stat: Accept): XdrWriter {
  // REPLY, MSG_ACCEPTED, verifier AUTH_NONE with no body.
  return new XdrWriter(32).u32(xid).u32(1).u32(0).u32(AUTH_NONE).u32(0).u32(stat);
}

/** Parses one call record and runs it; null when there is nothing to answer (not a CALL). */
export async function answer(record: Buffer, programs: Program[], peer: { ip: string }, keep: () => () => void = () => noop): Promise<Buffer[] | null> {
  const r = new XdrReader(record);
  let xid: number;
  try {
    xid = r.u32();
    if (r.u32() !== 0) return null; // a REPLY sent to a server: nothing to say
  } catch {
    return null;
  }
  try {
    if (r.u32() !== 2) {
      // MSG_DENIED, RPC_MISMATCH, versions 2..2.
      return [new XdrWriter(24).u32(xid).u32(1).u32(1).u32(0).u32(2).u32(2).done()];
    }
    const prog = r.u32();
    const vers = r.u32();
    const proc = r.u32();
    const ctx = credentials(r, peer.ip, keep);
    r.u32(); // verifier flavour
    r.opaque(400);
    const versions = programs.filter((p) => p.prog === prog);
    if (versions.length === 0) return [replyHead(xid, Accept.PROG_UNAVAIL).done()];
    const program = versions.find((p) => p.vers === vers);
    if (!program) {
      const vs = versions.map((p) => p.vers);
      return [
        replyHead(xid, Accept.PROG_MISMATCH)
          .u32(Math.min(...vs))
          .u32(Math.max(...vs))
          .done(),
      ];
    }
    const fn = program.procs[proc];
    if (!fn) return [replyHead(xid, Accept.PROC_UNAVAIL).done()];
    const body = await fn(r, ctx);
    return [replyHead(xid, Accept.SUCCESS).done(), ...body];
  } catch (e) {
    if (e instanceof XdrError) return [replyHead(xid, Accept.GARBAGE_ARGS).done()];
    return [replyHead(xid, Accept.SYSTEM_ERR).done()];
  }
}

/** AUTH_SYS's ids (RFC 5531 appendix A); other flavours are taken as anonymous. */
function credentials(r: XdrReader, ip: string, keep: () => () => void): CallContext {
  const flavour = r.u32();
  const body = r.opaque(400);
  const ctx: CallContext = { ip, uid: null, gid: null, machine: null, keep };
  if (flavour !== AUTH_SYS) return ctx;
  const c = new XdrReader(body);
  c.u32(); // stamp
  ctx.machine = c.string(255);
  ctx.uid = c.u32();
  ctx.gid = c.u32();
  return ctx;
}

/**
 * Serves RPC on one connection until it closes. `onBad` hears why a
 * connection was closed by us (an oversized record). `pool`: big
 * one-fragment records (WRITEs) are received into its buffers, given back
 * once answered (or, when the procedure kept its record with `ctx.keep`,
 * once it lets go), and reply parts from it are given back once sent.
 */
export function serveConnection(socket: Socket, programs: Program[], ip: string, onBad: (why: string) => void, pool?: BufferPool): void {
  const head = Buffer.alloc(4);
  let headFill = 0;
  let frag: Buffer | null = null;
  let fragPooled: Buffer | null = null;
  let fragFill = 0;
  let fragLast = false;
  let parts: Buffer[] = [];
  let recordLen = 0;
  let inFlight = 0;
  const peer = { ip };

  const resumeIfCalm = () => {
    if (socket.isPaused() && inFlight < MAX_IN_FLIGHT && socket.writableLength < SEND_HIGH_WATER) socket.resume();
  };
  socket.on('drain', resumeIfCalm);

  const run = (record: Buffer, pooled: Buffer | null) => {
    inFlight++;
    if (inFlight >= MAX_IN_FLIGHT) socket.pause();
    let kept = false;
    const keep = () => {
      kept = true;
      return pooled ? () => pool!.give(pooled) : noop;
    };
    answer(record, programs, peer, keep)
      .then((out) => {
        if (pooled && !kept) pool!.give(pooled);
        if (!out || socket.destroyed) return;
        const len = out.reduce((n, b) => n + b.length, 0);
        const mark = Buffer.allocUnsafe(4);
        mark.writeUInt32BE((LAST_FRAGMENT | len) >>> 0);
        socket.cork();
        socket.write(mark);
        for (let i = 0; i < out.length - 1; i++) socket.write(out[i]);
        socket.write(out[out.length - 1], () => {
          if (pool) for (const b of out) pool.give(b);
        });
        socket.uncork();
        if (socket.writableLength >= SEND_HIGH_WATER) socket.pause();
      })
      .catch(() => socket.destroy())
      .finally(() => {
        inFlight--;
        resumeIfCalm();
      });
  };

  socket.on('data', (chunk: Buffer) => {
    let at = 0;
    while (at < chunk.length && !socket.destroyed) {
      if (!frag) {
        const n = Math.min(4 - headFill, chunk.length - at);
        chunk.copy(head, headFill, at, at + n);
        headFill += n;
        at += n;
        if (headFill < 4) return;
        headFill = 0;
        const mark = head.readUInt32BE(0);
        const len = mark & ~LAST_FRAGMENT;
        fragLast = (mark & LAST_FRAGMENT) !== 0;
        if (recordLen + len > MAX_RECORD) {
          onBad(`a record of more than ${recordLen + len} bytes`);
          socket.destroy();
          return;
        }
        // A whole record in one big fragment (a WRITE) goes into a pooled buffer.
        fragPooled = pool && fragLast && recordLen === 0 && len > 64 * 1024 && len <= pool.size ? pool.take() : null;
        frag = fragPooled ? fragPooled.subarray(0, len) : Buffer.allocUnsafe(len);
        fragFill = 0;
      }
      const n = Math.min(frag.length - fragFill, chunk.length - at);
      chunk.copy(frag, fragFill, at, at + n);
      fragFill += n;
      at += n;
      if (fragFill < frag.length) return;
      parts.push(frag);
      recordLen += frag.length;
      frag = null;
      if (fragLast) {
        const record = parts.length === 1 ? parts[0] : Buffer.concat(parts, recordLen);
        parts = [];
        recordLen = 0;
        run(record, fragPooled);
        fragPooled = null;
      }
    }
  });
}
