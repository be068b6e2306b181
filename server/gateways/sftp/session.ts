/**
 * One SFTP subsystem channel (SFTPv3, what OpenSSH, rclone, WinSCP and
 * FileZilla speak) over the gateway tree. Paths are resolved in one place
 * (`treePath`, `..` never above `/`, the home folder), every request goes
 * through `GatewayTree` (access, key roots, the write gate), and every
 * refusal is answered from the one error table (errors.ts).
 *
 * Choices a client can notice (docs/gateways-sftp.md):
 *   - a file opened for writing is written whole: it becomes exactly the
 *     bytes written, published at CLOSE (no TRUNC needed; APPEND and writes
 *     behind what was written are OP_UNSUPPORTED);
 *   - RENAME refuses an existing target (SFTPv3); `posix-rename@openssh.com`
 *     replaces it;
 *   - SETSTAT/FSETSTAT succeed without applying modes or times;
 *   - no links (READLINK/SYMLINK are OP_UNSUPPORTED).
 */
import ssh2, { type SFTPWrapper, type Attributes } from 'ssh2';
import { AppError, isAppError } from '../../errors';
import { treePath, type GatewayTree } from '../index';
import { attrsOf, nameOf } from './attrs';
import { sftpStatus } from './errors';
import { DirHandle, ReadHandle, WriteHandle, type Handle } from './handles';
import { Replies } from './replies';

const { OPEN_MODE: F, STATUS_CODE: S } = ssh2.utils.sftp;
/** Bytes answered to one READ at most (OpenSSH asks for 32 KiB; longer asks get a short read, which SFTP allows). */
const MAX_READ = 255 * 1024;
const MAX_HANDLES = 256;
/** Upload bytes one session may hold in memory across its open files (see WriteHandle). */
const SESSION_HELD_MAX = 32 << 20;
const READDIR_BATCH = 128;

/** What the gateway's sessions did, for the bounds' tests and benches. */
export interface SftpStats {
  /** The most upload bytes one session held in memory at once (received, not yet stored): at most SESSION_HELD_MAX. */
  heldPeak: number;
}

/**
 * Serves `sftp` until the channel closes; open uploads are then dropped
 * unpublished. `treeNow` gives the tree as the account is now (each request
 * that names a path asks it; it throws once the account or key is gone).
 */
export function serveSftp(sftp: SFTPWrapper, treeNow: () => Promise<GatewayTree>, owner: string, stats: SftpStats): void {
  const handles = new Map<number, { h: Handle; path: string }>();
  let nextId = 1;
  let closed = false;
  // WRITE's answers, packed per turn of the loop (the rest answer one by one).
  const replies = new Replies(sftp);

  const path = (raw: string) => treePath(raw, { cwd: '/', dots: 'resolve' });
  const send = (f: () => void) => {
    if (closed) return;
    try {
      f();
    } catch {
      // The channel closed under the reply: nothing left to tell.
    }
  };
  const fail = (reqid: number, e: unknown) => {
    const s = sftpStatus(e);
    send(() => sftp.status(reqid, s.code, s.message));
  };
  const ok = (reqid: number) => send(() => sftp.status(reqid, S.OK));
  /** Runs a request; any throw becomes its status. */
  const run = (reqid: number, work: () => Promise<void>) => void work().catch((e) => fail(reqid, e));
  const handleOf = (buf: Buffer) => (buf.length === 4 ? handles.get(buf.readUInt32BE(0)) : undefined);
  const roomForHandle = () => {
    if (handles.size >= MAX_HANDLES) throw new AppError('too_many', { max: MAX_HANDLES });
  };
  const addHandle = (h: Handle, p: string): Buffer => {
    const id = nextId++;
    handles.set(id, { h, path: p });
    const buf = Buffer.alloc(4);
    buf.writeUInt32BE(id, 0);
    return buf;
  };
  const roomFor = (bytes: number) => {
    let held = 0;
    for (const { h } of handles.values()) if (h instanceof WriteHandle) held += h.held;
    if (held + bytes > SESSION_HELD_MAX) return false;
    stats.heldPeak = Math.max(stats.heldPeak, held + bytes);
    return true;
  };
  const badHandle = () => new AppError('bad_id', {}, undefined, 'unknown handle');
  const statOrNull = (tree: GatewayTree, p: string) => tree.stat(p).catch((e) => (isAppError(e) && e.code === 'not_found' ? null : Promise.reject(e)));

  sftp.on('OPEN', (reqid, filename, flags) =>
    run(reqid, async () => {
      const tree = await treeNow();
      const p = path(filename);
      roomForHandle();
      if (!(flags & F.WRITE)) {
        const h = new ReadHandle(await tree.open(p));
        send(() => sftp.handle(reqid, addHandle(h, p)));
        return;
      }
      if (flags & F.APPEND) throw new AppError('unsupported', {}, { reason: 'append' }, 'appending is not supported: files are written whole');
      const t = tree.files.target(p, 'editor');
      if (t.rel === '') throw new AppError('forbidden', { reason: 'a storage root is a folder' });
      const cur = await statOrNull(tree, p);
      if (cur?.type === 'dir') throw new AppError('conflict', { path: p }, { reason: 'a folder' });
      if (!cur && !(flags & F.CREAT)) throw new AppError('not_found', { path: p });
      if (cur && flags & F.EXCL) throw new AppError('conflict', { path: p });
      send(() => sftp.handle(reqid, addHandle(new WriteHandle(tree, p, !(flags & F.EXCL), roomFor), p)));
    }),
  );

  sftp.on('READ', (reqid, handle, offset, len) =>
    run(reqid, async () => {
      const h = handleOf(handle)?.h;
      if (!(h instanceof ReadHandle)) throw badHandle();
      const data = await h.read(offset, Math.min(len, MAX_READ));
      if (data.length === 0) send(() => sftp.status(reqid, S.EOF));
      else send(() => sftp.data(reqid, data));
    }),
  );

  sftp.on('WRITE', (reqid, handle, offset, data) =>
    run(reqid, async () => {
      const h = handleOf(handle)?.h;
      if (!(h instanceof WriteHandle)) throw badHandle();
      await h.write(offset, data);
      replies.ok(reqid);
    }),
  );

  sftp.on('CLOSE', (reqid, handle) =>
    run(reqid, async () => {
      const e = handleOf(handle);
      if (!e) throw badHandle();
      handles.delete(handle.readUInt32BE(0));
      await e.h.close();
      ok(reqid);
    }),
  );

  sftp.on('FSTAT', (reqid, handle) =>
    run(reqid, async () => {
      const e = handleOf(handle);
      if (!e) throw badHandle();
      const h = e.h;
      if (h instanceof ReadHandle) send(() => sftp.attrs(reqid, attrsOf({ name: h.file.name, type: 'file', size: h.file.size, mtime: h.file.mtime })));
      else if (h instanceof WriteHandle) send(() => sftp.attrs(reqid, attrsOf({ name: '', type: 'file', size: h.written, mtime: Date.now() })));
      else send(() => sftp.attrs(reqid, attrsOf({ name: '', type: 'dir', size: 0, mtime: 0 })));
    }),
  );

  // Modes, owners and times are not kept by the tree: accepted, not applied (clients such as `put -p` expect success).
  sftp.on('FSETSTAT', (reqid, handle) => (handleOf(handle) ? ok(reqid) : fail(reqid, badHandle())));
  sftp.on('SETSTAT', (reqid, raw) =>
    run(reqid, async () => {
      const tree = await treeNow();
      await tree.stat(path(raw));
      ok(reqid);
    }),
  );

  sftp.on('OPENDIR', (reqid, raw) =>
    run(reqid, async () => {
      const tree = await treeNow();
      const p = path(raw);
      roomForHandle();
      const e = await tree.stat(p);
      if (e.type !== 'dir') throw new AppError('not_found', { path: p }, { reason: 'not a folder' });
      const h = new DirHandle(tree.list(p)[Symbol.asyncIterator]());
      send(() => sftp.handle(reqid, addHandle(h, p)));
    }),
  );

  sftp.on('READDIR', (reqid, handle) =>
    run(reqid, async () => {
      const h = handleOf(handle)?.h;
      if (!(h instanceof DirHandle)) throw badHandle();
      const batch = await h.next(READDIR_BATCH);
      const now = Date.now();
      if (!batch) send(() => sftp.status(reqid, S.EOF));
      else
        send(() =>
          sftp.name(
            reqid,
            batch.map((e) => nameOf(e, owner, now)),
          ),
        );
    }),
  );

  const stat = (reqid: number, raw: string) =>
    run(reqid, async () => {
      const tree = await treeNow();
      const a = attrsOf(await tree.stat(path(raw)));
      send(() => sftp.attrs(reqid, a));
    });
  sftp.on('STAT', stat);
  sftp.on('LSTAT', stat);

  sftp.on('REMOVE', (reqid, raw) =>
    run(reqid, async () => {
      const tree = await treeNow();
      const p = path(raw);
      if ((await tree.stat(p)).type === 'dir') throw new AppError('conflict', { path: p }, { reason: 'a folder: use rmdir' });
      await tree.delete(p);
      ok(reqid);
    }),
  );

  sftp.on('RMDIR', (reqid, raw) =>
    run(reqid, async () => {
      const tree = await treeNow();
      const p = path(raw);
      if ((await tree.stat(p)).type !== 'dir') throw new AppError('conflict', { path: p }, { reason: 'not a folder' });
      const it = tree.list(p)[Symbol.asyncIterator]();
      const first = await it.next();
      await it.return?.(undefined);
      if (!first.done) throw new AppError('conflict', { path: p }, { reason: 'not empty' });
      await tree.delete(p);
      ok(reqid);
    }),
  );

  sftp.on('MKDIR', (reqid, raw) =>
    run(reqid, async () => {
      const tree = await treeNow();
      const p = path(raw);
      // The file service's mkdir is idempotent; SFTP's is not.
      if (await statOrNull(tree, p)) throw new AppError('conflict', { path: p });
      await tree.mkdir(p);
      ok(reqid);
    }),
  );

  sftp.on('RENAME', (reqid, from, to) =>
    run(reqid, async () => {
      const tree = await treeNow();
      await tree.move(path(from), path(to), false);
      ok(reqid);
    }),
  );

  sftp.on('EXTENDED', (reqid, name, data) =>
    run(reqid, async () => {
      const tree = await treeNow();
      if (name !== 'posix-rename@openssh.com') throw new AppError('unsupported', { name });
      const [from, to] = strings(data, 2);
      await tree.move(path(from), path(to), true);
      ok(reqid);
    }),
  );

  sftp.on('REALPATH', (reqid, raw) =>
    run(reqid, async () => {
      const p = path(raw);
      send(() => sftp.name(reqid, [{ filename: p, longname: p, attrs: {} as Attributes }]));
    }),
  );

  const noLinks = (reqid: number) => fail(reqid, new AppError('unsupported', {}, undefined, 'no links in the tree'));
  sftp.on('READLINK', noLinks);
  sftp.on('SYMLINK', noLinks);

  // The client is done sending (its batch ended): close our side so it can exit.
  sftp.on('end', () => send(() => sftp.end()));
  sftp.on('close', () => {
    closed = true;
    for (const { h } of handles.values()) {
      if (h instanceof WriteHandle) h.abandon();
      else void h.close().catch(() => undefined);
    }
    handles.clear();
  });
}

/** `count` SSH strings (uint32 length + UTF-8 bytes) from an EXTENDED request's data. */
function strings(buf: Buffer, count: number): string[] {
  const out: string[] = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    if (at + 4 > buf.length) throw new AppError('bad_body');
    const n = buf.readUInt32BE(at);
    if (at + 4 + n > buf.length) throw new AppError('bad_body');
    out.push(buf.toString('utf8', at + 4, at + 4 + n));
    at += 4 + n;
  }
  return out;
}
