/**
 * NFSv3 attributes (RFC 1813 fattr3, post_op_attr, wcc_data). The tree has
 * no owners or modes: files show 0644 and folders 0755 (0444 / 0555 on a
 * read-only export), owned by the uid/gid the client sent, so a client's own
 * permission checks let it try; the file service decides each request.
 */
import type { GatewayEntry } from '../index';
import type { XdrWriter } from './xdr';

export const NF3REG = 1;
export const NF3DIR = 2;

/** What fattr3 is made from. */
export interface Attrs {
  entry: GatewayEntry;
  /** Unique within the export's file system (a node id). */
  fileid: number;
  /** The export id: every export is its own file system to the client. */
  fsid: number;
  readOnly: boolean;
  uid: number;
  gid: number;
}

/** Writes fattr3 (84 bytes). */
export function fattr3(w: XdrWriter, a: Attrs): XdrWriter {
  const dir = a.entry.type === 'dir';
  const mode = dir ? (a.readOnly ? 0o555 : 0o755) : a.readOnly ? 0o444 : 0o644;
  const size = dir ? 4096 : a.entry.size;
  w.u32(dir ? NF3DIR : NF3REG)
    .u32(mode)
    .u32(dir ? 2 : 1)
    .u32(a.uid)
    .u32(a.gid);
  w.u64(size).u64(size); // size, used
  w.u32(0).u32(0); // rdev
  w.u64(a.fsid).u64(a.fileid);
  const sec = Math.floor(a.entry.mtime / 1000);
  const nsec = (a.entry.mtime % 1000) * 1_000_000;
  for (let i = 0; i < 3; i++) w.u32(sec).u32(nsec); // atime, mtime, ctime
  return w;
}

/** post_op_attr: the attributes when known. */
export function postOpAttr(w: XdrWriter, a: Attrs | null): XdrWriter {
  return a ? fattr3(w.bool(true), a) : w.bool(false);
}

/** wcc_data without the before-state (clients then re-read what they cache). */
export function wcc(w: XdrWriter, after: Attrs | null): XdrWriter {
  return postOpAttr(w.bool(false), after);
}
