/**
 * The NFS version 3 program (RFC 1813) over the tree: every call resolves its
 * handle through the export book (address, account, node), reads and writes
 * through `GatewayTree` (access, write gate, audit, realtime), and answers
 * refusals with the status from errors.ts. Folder listings are in readdir.ts,
 * writes in writes.ts. SYMLINK, MKNOD, LINK and READLINK → NOTSUPP.
 */
import { randomBytes } from 'node:crypto';
import { isAppError } from '../../errors';
import type { GatewayEntry } from '../index';
import type { ListedEntry } from './readdir';
import { fattr3, postOpAttr, wcc, type Attrs } from './attrs';
import type { ExportBook, Located } from './book';
import { Nfs3, NfsError, nfsStatus } from './errors';
import { FHSIZE } from './handles';
import { COOKIE_VERF, DirCursors } from './readdir';
import type { OpenReads } from './reads';
import type { CallContext, Procedure, Program } from './rpc';
import type { StagedFiles } from './writes';
import { XdrError, XdrWriter, type XdrReader } from './xdr';

export const NFS_PROGRAM = 100003;
/** Largest READ and WRITE (FSINFO rtmax, wtmax). */
export const RTMAX = 1 << 20;
export const WTMAX = 1 << 20;
const NAME_MAX = 255;
/** Changes on every start: clients resend writes they had not committed (RFC 1813 section 3.3.7). */
const WRITE_VERF = randomBytes(8);
const UNSTABLE = 0;
const FILE_SYNC = 2;
const ACCESS_READ = 0x1 | 0x2 | 0x20;
const ACCESS_ALL = 0x3f;

export interface Nfs3Deps {
  book: ExportBook;
  stages: StagedFiles;
  reads: OpenReads;
  /** A connection's first resolved call: whom it acts as (the registry's session). */
  seen: (ctx: CallContext, loc: Located) => void;
}

/** What a failing call sends after its status. */
type FailBody = (w: XdrWriter) => void;
const noAttr: FailBody = (w) => w.bool(false);
const noWcc: FailBody = (w) => w.bool(false).bool(false);
const twoWcc: FailBody = (w) => w.bool(false).bool(false).bool(false).bool(false);

export function nfs3Program(d: Nfs3Deps): Program {
  const cursors = new DirCursors();

  /** Reads a handle from `r` at once (the arguments are read in order), then resolves it. */
  const locate = async (r: XdrReader, ctx: CallContext): Promise<Located> => {
    const loc = await d.book.locate(r.opaque(FHSIZE), ctx.ip);
    d.seen(ctx, loc);
    return loc;
  };

  const entryOf = async (loc: Located): Promise<GatewayEntry> => {
    if (loc.pending) return { name: loc.rel.slice(loc.rel.lastIndexOf('/') + 1), type: 'file', size: loc.pending.size, mtime: Date.now() };
    const e = await loc.tree.stat(loc.path);
    const stage = e.type === 'file' ? d.stages.at(loc) : undefined;
    return stage ? { ...e, size: stage.size } : e;
  };

  /** `fileid`: the item's id (a listing's node id, or the catalogue's: `attrs`). */
  const attrsWith = (loc: Pick<Located, 'exp'>, entry: GatewayEntry, ctx: CallContext, fileid: number): Attrs => ({
    entry,
    fileid,
    fsid: loc.exp.id,
    readOnly: loc.exp.read_only,
    uid: ctx.uid ?? 0,
    gid: ctx.gid ?? 0,
  });

  const attrs = async (loc: Pick<Located, 'exp' | 'storageId' | 'rel' | 'pending' | 'nodeId'>, entry: GatewayEntry, ctx: CallContext): Promise<Attrs> =>
    attrsWith(loc, entry, ctx, loc.pending ? 2 ** 51 + (loc.pending.pendingId ?? 0) : (loc.nodeId ?? (await d.book.fileid(loc))));

  const attrsOf = async (loc: Located, ctx: CallContext): Promise<Attrs | null> => {
    try {
      return await attrs(loc, await entryOf(loc), ctx);
    } catch {
      return null;
    }
  };

  /** The item `name` in folder `dir`: its place and UI path; `.` and `..` are not names here. */
  const childOf = (dir: Located, name: string) => {
    if (name.length === 0 || name.includes('/') || name.includes('\0') || name === '.' || name === '..') throw new NfsError(Nfs3.INVAL);
    if (Buffer.byteLength(name) > NAME_MAX) throw new NfsError(Nfs3.NAMETOOLONG);
    const rel = dir.rel === '' ? name : `${dir.rel}/${name}`;
    return { ...dir, rel, path: `${dir.path}/${name}`, pending: undefined, nodeId: undefined };
  };

  const writable = (loc: Located) => {
    if (loc.exp.read_only) throw new NfsError(Nfs3.ROFS);
  };

  /** Runs a procedure body; a refusal answers with its status and `fail`. */
  const call =
    (body: (r: XdrReader, ctx: CallContext, w: XdrWriter) => Promise<Buffer[] | void>, fail: FailBody): Procedure =>
    async (r, ctx) => {
      try {
        const w = new XdrWriter(256).u32(Nfs3.OK);
        return (await body(r, ctx, w)) ?? [w.done()];
      } catch (e) {
        if (e instanceof XdrError) throw e;
        const status = nfsStatus(e);
        if (status === Nfs3.SERVERFAULT) d.stages.log.warn(`nfs: ${e instanceof Error ? e.message : String(e)}`);
        const w = new XdrWriter(128).u32(status);
        fail(w);
        return [w.done()];
      }
    };

  /** A procedure this gateway does not offer: NOTSUPP with the procedure's failure body. */
  const notSupported = (fail: FailBody): Procedure =>
    call(async () => {
      throw new NfsError(Nfs3.NOTSUPP);
    }, fail);

  const lookup = async (dir: Located, name: string): Promise<Located> => {
    if (name === '.') return dir;
    const child = childOf(dir, name);
    const stage = d.stages.at(child);
    if (stage?.pendingId != null && !stage.sealed) return { ...child, pending: stage };
    await child.tree.stat(child.path);
    return child;
  };

  const procs: Record<number, Procedure> = {
    0: () => [],
    // GETATTR
    1: call(
      async (r, ctx, w) => {
        const loc = await locate(r, ctx);
        fattr3(w, await attrs(loc, await entryOf(loc), ctx));
      },
      () => undefined,
    ),
    // SETATTR: size (truncate or extend); times and modes are taken and not kept.
    2: call(async (r, ctx, w) => {
      const loc = await locate(r, ctx);
      const size = readSattr(r);
      if (r.bool()) r.fixed(8); // guard ctime: not checked
      if (size !== null) {
        writable(loc);
        const e = await entryOf(loc);
        if (e.type === 'dir') throw new NfsError(Nfs3.ISDIR);
        loc.tree.files.target(loc.path, 'editor');
        const stage = loc.pending ?? (await d.stages.forWrite(loc.tree, loc, size === 0 ? 0 : e.size));
        await stage.truncate(size);
      }
      wcc(w, await attrsOf(loc, ctx));
    }, noWcc),
    // LOOKUP
    3: call(async (r, ctx, w) => {
      const dir = await locate(r, ctx);
      const name = r.string(1024);
      let child: Located;
      try {
        child = await lookup(dir, name === '..' ? '.' : name);
        if (name === '..' && dir.rel !== d.book.root(dir.exp, dir.tree).rel) {
          const up = dir.rel.slice(0, Math.max(0, dir.rel.lastIndexOf('/')));
          child = { ...dir, rel: up, path: dir.path.slice(0, dir.path.lastIndexOf('/')), pending: undefined, nodeId: undefined };
        }
      } catch (e) {
        const fail = new XdrWriter(96).u32(nfsStatus(e));
        return [postOpAttr(fail, await attrsOf(dir, ctx)).done()];
      }
      w.opaque(
        child.pending
          ? d.book.handles.make({ exportId: child.exp.id, kind: 'pending', id: child.pending.pendingId! })
          : await d.book.handleOf(child.exp, child),
      );
      postOpAttr(w, await attrsOf(child, ctx));
      postOpAttr(w, await attrsOf(dir, ctx));
    }, noAttr),
    // ACCESS: what the export and the account allow; each call is still checked.
    4: call(async (r, ctx, w) => {
      const loc = await locate(r, ctx);
      const want = r.u32();
      let may = ACCESS_ALL;
      if (loc.exp.read_only) may = ACCESS_READ;
      else if (!loc.pending) {
        try {
          loc.tree.files.target(loc.path, 'editor', { passage: true });
        } catch {
          may = ACCESS_READ;
        }
      }
      postOpAttr(w, await attrsOf(loc, ctx)).u32(want & may);
    }, noAttr),
    // READLINK
    5: notSupported(noAttr),
    // READ: counts past RTMAX are served RTMAX bytes (the client asks again for the rest).
    6: call(async (r, ctx, w) => {
      const loc = await locate(r, ctx);
      const offset = r.u64();
      const count = Math.min(r.u32(), RTMAX);
      let data: Buffer;
      let size: number;
      const stage = loc.pending ?? d.stages.at(loc);
      if (stage) {
        data = await stage.read(offset, count);
        size = stage.size;
      } else {
        // Access on every call; the file itself is opened through the tree at most every FRESH_MS (reads.ts).
        loc.tree.files.target(loc.path);
        ({ data, size } = await d.reads.read(loc, () => loc.tree.open(loc.path), offset, count));
      }
      const eof = offset + data.length >= size;
      const a = await attrs(loc, { name: '', type: 'file', size, mtime: Date.now() }, ctx);
      postOpAttr(w, a).u32(data.length).bool(eof).u32(data.length);
      const pad = (4 - (data.length & 3)) & 3;
      return pad ? [w.done(), data, Buffer.alloc(pad)] : [w.done(), data];
    }, noAttr),
    // WRITE: into the file's stage; UNSTABLE answered at once, FILE_SYNC once the stage is on disk.
    7: call(async (r, ctx, w) => {
      const loc = await locate(r, ctx);
      const offset = r.u64();
      const count = r.u32();
      const stable = r.u32();
      const data = r.opaque(r.left);
      if (count > WTMAX || data.length > WTMAX || data.length < count) throw new NfsError(Nfs3.INVAL);
      writable(loc);
      const sync = stable !== UNSTABLE;
      for (;;) {
        let stage = loc.pending ?? d.stages.at(loc);
        if (!stage || stage.sealed) {
          loc.tree.files.target(loc.path, 'editor');
          const e = await loc.tree.stat(loc.path);
          if (e.type === 'dir') throw new NfsError(Nfs3.ISDIR);
          stage = await d.stages.forWrite(loc.tree, loc, e.size);
        }
        if (await stage.write(offset, data.subarray(0, count), sync, ctx.keep)) break;
        if (loc.pending) throw new NfsError(Nfs3.STALE);
      }
      const stage = loc.pending ?? d.stages.at(loc);
      wcc(w, await attrs(loc, { name: '', type: 'file', size: stage?.size ?? offset + count, mtime: Date.now() }, ctx));
      w.u32(count)
        .u32(sync ? FILE_SYNC : UNSTABLE)
        .fixed(WRITE_VERF);
    }, noWcc),
    // CREATE: a new file is pending (invisible to other doors) until published.
    8: call(async (r, ctx, w) => {
      const dir = await locate(r, ctx);
      const child = childOf(dir, r.string(1024));
      const mode = r.u32();
      const size = mode === 2 ? (r.fixed(8), null) : readSattr(r);
      writable(dir);
      dir.tree.files.staged(child.path);
      const existing = await child.tree.stat(child.path).then(
        (e) => e,
        (e) => {
          if (isAppError(e) && e.code === 'not_found') return null;
          throw e;
        },
      );
      const open = d.stages.at(child);
      let made: Located;
      if (existing || (open && !open.sealed)) {
        if (mode !== 0) throw new NfsError(Nfs3.EXIST);
        if (existing?.type === 'dir') throw new NfsError(Nfs3.ISDIR);
        if (size === 0) await (open && !open.sealed ? open : await d.stages.forWrite(child.tree, child, 0)).truncate(0);
        const stage = d.stages.at(child);
        made = stage?.pendingId != null ? { ...child, pending: stage } : child;
      } else {
        made = { ...child, pending: await d.stages.create(child.tree, child) };
      }
      w.bool(true).opaque(
        made.pending ? d.book.handles.make({ exportId: made.exp.id, kind: 'pending', id: made.pending.pendingId! }) : await d.book.handleOf(made.exp, made),
      );
      postOpAttr(w, await attrsOf(made, ctx));
      wcc(w, await attrsOf(dir, ctx));
    }, noWcc),
    // MKDIR
    9: call(async (r, ctx, w) => {
      const dir = await locate(r, ctx);
      const child = childOf(dir, r.string(1024));
      readSattr(r);
      writable(dir);
      await child.tree.mkdir(child.path);
      w.bool(true).opaque(await d.book.handleOf(child.exp, child));
      postOpAttr(w, await attrsOf(child, ctx));
      wcc(w, await attrsOf(dir, ctx));
    }, noWcc),
    // SYMLINK, MKNOD
    10: notSupported(noWcc),
    11: notSupported(noWcc),
    // REMOVE
    12: call(async (r, ctx, w) => {
      const dir = await locate(r, ctx);
      const child = childOf(dir, r.string(1024));
      writable(dir);
      const stage = d.stages.at(child);
      if (stage?.pendingId != null) await stage.discard();
      else {
        const e = await child.tree.stat(child.path);
        if (e.type === 'dir') throw new NfsError(Nfs3.ISDIR);
        child.tree.files.target(child.path, 'editor');
        await stage?.discard();
        await child.tree.delete(child.path);
        d.reads.forget(child);
      }
      wcc(w, await attrsOf(dir, ctx));
    }, noWcc),
    // RMDIR
    13: call(async (r, ctx, w) => {
      const dir = await locate(r, ctx);
      const child = childOf(dir, r.string(1024));
      writable(dir);
      const e = await child.tree.stat(child.path);
      if (e.type !== 'dir') throw new NfsError(Nfs3.NOTDIR);
      const it = child.tree.list(child.path);
      const first = await it.next();
      await it.return(undefined);
      if (!first.done) throw new NfsError(Nfs3.NOTEMPTY);
      await child.tree.delete(child.path);
      wcc(w, await attrsOf(dir, ctx));
    }, noWcc),
    // RENAME: a file being written is published first, then moved (replacing what is at the target).
    14: call(async (r, ctx, w) => {
      const fromDir = await locate(r, ctx);
      const from = childOf(fromDir, r.string(1024));
      const toDir = await locate(r, ctx);
      const to = childOf(toDir, r.string(1024));
      writable(fromDir);
      writable(toDir);
      if (from.path !== to.path) {
        await d.stages.at(from)?.publish();
        await d.stages.at(to)?.discard();
        await from.tree.move(from.path, to.path, true);
        d.reads.forget(from);
        d.reads.forget(to);
      }
      wcc(w, await attrsOf(fromDir, ctx));
      wcc(w, await attrsOf(toDir, ctx));
    }, twoWcc),
    // LINK
    15: notSupported((w) => twoWcc(w.bool(false))),
    // READDIR
    16: call((r, ctx, w) => readdir(r, ctx, w, false), noAttr),
    // READDIRPLUS
    17: call((r, ctx, w) => readdir(r, ctx, w, true), noAttr),
    // FSSTAT: the tree has no one size; large numbers, so clients do not refuse to write.
    18: call(async (r, ctx, w) => {
      const loc = await locate(r, ctx);
      postOpAttr(w, await attrsOf(loc, ctx));
      const big = 2 ** 50;
      w.u64(big)
        .u64(big)
        .u64(big)
        .u64(2 ** 32)
        .u64(2 ** 32)
        .u64(2 ** 32)
        .u32(0);
    }, noAttr),
    // FSINFO
    19: call(async (r, ctx, w) => {
      const loc = await locate(r, ctx);
      postOpAttr(w, await attrsOf(loc, ctx));
      w.u32(RTMAX)
        .u32(RTMAX)
        .u32(4096)
        .u32(WTMAX)
        .u32(WTMAX)
        .u32(4096)
        .u32(64 * 1024);
      w.u64(2 ** 53 - 1)
        .u32(0)
        .u32(1_000_000);
      w.u32(0x0008 | 0x0010); // FSF3_HOMOGENEOUS | FSF3_CANSETTIME
    }, noAttr),
    // PATHCONF
    20: call(async (r, ctx, w) => {
      const loc = await locate(r, ctx);
      postOpAttr(w, await attrsOf(loc, ctx));
      w.u32(1).u32(NAME_MAX).bool(true).bool(true).bool(false).bool(true);
    }, noAttr),
    // COMMIT: publishes the file written so far.
    21: call(async (r, ctx, w) => {
      const loc = await locate(r, ctx);
      r.u64();
      r.u32();
      await (loc.pending ?? d.stages.at(loc))?.publish();
      wcc(w, await attrsOf(loc, ctx));
      w.fixed(WRITE_VERF);
    }, noWcc),
  };

  async function readdir(r: XdrReader, ctx: CallContext, w: XdrWriter, plus: boolean): Promise<void> {
    const dir = await locate(r, ctx);
    const cookie = r.u64();
    const verf = r.fixed(8);
    if (plus) r.u32(); // dircount: maxcount bounds the reply
    const max = Math.min(r.u32(), RTMAX);
    const dirAttrs = await attrsOf(dir, ctx);
    if (dirAttrs?.entry.type !== 'dir') throw new NfsError(Nfs3.NOTDIR);
    const key = `${dir.exp.id}\0${dir.storageId}\0${dir.rel}\0${plus}`;
    const c = await cursors.open(key, cookie, verf, () => dir.tree.list(dir.path));
    postOpAttr(w, dirAttrs).fixed(COOKIE_VERF);
    // Room for the list's end marker and eof.
    let room = max - w.pos - 8;
    let sent = 0;
    for (;;) {
      const n = await cursors.next(c);
      if (!n) {
        cursors.finish(c);
        w.bool(false).bool(true);
        return;
      }
      // Written in place and taken back when it does not fit (no buffer per entry).
      const start = w.pos;
      const place = { exp: dir.exp, storageId: dir.storageId, rel: dir.rel === '' ? n.entry.name : `${dir.rel}/${n.entry.name}`, pending: undefined };
      // The listing carries the node id: no catalogue look-up per entry.
      entry(w, dir, n.entry, n.entry.id ?? (await d.book.fileid(place)), n.cookie, ctx, plus);
      const size = w.pos - start;
      if (size > room) {
        w.pos = start;
        if (sent === 0) throw new NfsError(Nfs3.TOOSMALL);
        cursors.keep(key, c, n.entry, n.cookie - 1);
        w.bool(false).bool(false);
        return;
      }
      room -= size;
      sent++;
    }
  }

  function entry(w: XdrWriter, dir: Located, e: ListedEntry, fileid: number, cookie: number, ctx: CallContext, plus: boolean): XdrWriter {
    w.bool(true).u64(fileid).string(e.name).u64(cookie);
    if (!plus) return w;
    postOpAttr(w, attrsWith(dir, e, ctx, fileid));
    if (fileid === 0) return w.bool(false);
    return w.bool(true).opaque(d.book.handles.make({ exportId: dir.exp.id, kind: 'node', id: fileid }));
  }

  return { prog: NFS_PROGRAM, vers: 3, procs };
}

/** Reads sattr3; the size to set, or null. Modes, owners and times are read and not kept. */
function readSattr(r: XdrReader): number | null {
  if (r.bool()) r.u32(); // mode
  if (r.bool()) r.u32(); // uid
  if (r.bool()) r.u32(); // gid
  const size = r.bool() ? r.u64() : null;
  for (let i = 0; i < 2; i++) if (r.u32() === 2) r.fixed(8); // atime, mtime: SET_TO_CLIENT_TIME carries one
  return size;
}
