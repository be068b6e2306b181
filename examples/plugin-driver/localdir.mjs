#!/usr/bin/env node
/**
 * Example storage plugin for Filedock: serves a folder of the local disk over
 * `filedock-storage/1` (docs/plugin-driver-protocol.md). Plain Node, no
 * dependencies. Start it by dropping this file into `<data dir>/plugins/`.
 *
 * stdout carries protocol messages only (one JSON-RPC 2.0 message per line);
 * anything for humans goes to stderr.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { cp, lstat, mkdir, readdir, rename, rm, stat, link, unlink } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { createInterface } from 'node:readline';

const PROTOCOL = 'filedock-storage/1';
const SERVICE_RANGE = '>=0.1.0 <1.0.0';
const WINDOW_BYTES = 1024 * 1024;
const CHUNK_BYTES = 256 * 1024;
const TEMP_PREFIX = '.~fd-';

let root = null;
/** Open body streams by call id: reads we send, writes we receive. */
const streams = new Map();

const send = (msg) => process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...msg })}\n`);
const notify = (method, params) => send({ method, params });

class PluginError extends Error {
  constructor(code, message, params = {}) {
    super(message ?? code);
    this.code = code;
    this.params = params;
  }
}

/** The protocol's code for a filesystem error. */
function fsError(e, path) {
  const byErrno = {
    ENOENT: 'not_found',
    ENOTDIR: 'not_found',
    EEXIST: 'conflict',
    ENOTEMPTY: 'conflict',
    EACCES: 'permission_denied',
    EPERM: 'permission_denied',
    ENAMETOOLONG: 'name_too_long',
    EINVAL: 'name_not_allowed',
  };
  if (e instanceof PluginError) return e;
  return new PluginError(byErrno[e.code] ?? 'storage_unreachable', e.message, path === undefined ? {} : { path });
}

/** Absolute path of a relative one, refusing anything that would leave the root. */
function abs(rel) {
  if (!root) throw new PluginError('storage_unreachable', 'open was not called');
  if (typeof rel !== 'string' || rel.includes('\0') || isAbsolute(rel) || rel.split('/').includes('..')) throw new PluginError('bad_path', 'bad path');
  const p = resolve(root, rel);
  if (p !== root && !p.startsWith(root + sep)) throw new PluginError('bad_path', 'outside the root');
  return p;
}

/** Sends all but the last batch of a long listing as `entries` notifications; returns the last batch for the reply. */
function sendBatches(id, entries, size = 1000) {
  let at = 0;
  for (; entries.length - at > size; at += size) notify('entries', { id, entries: entries.slice(at, at + size) });
  return entries.slice(at);
}

const entryOf = (name, st) => ({ name, type: st.isDirectory() ? 'dir' : 'file', size: st.isDirectory() ? 0 : st.size, mtime: Math.round(st.mtimeMs) });

async function exists(p) {
  return lstat(p).then(
    () => true,
    () => false,
  );
}

async function listDir(rel) {
  const dir = abs(rel);
  if (!(await stat(dir)).isDirectory()) throw new PluginError('not_found', 'not a folder', { path: rel });
  const out = [];
  for (const d of await readdir(dir, { withFileTypes: true })) {
    if (d.name.startsWith(TEMP_PREFIX)) continue;
    const st = await stat(join(dir, d.name)).catch(() => null);
    if (st) out.push(entryOf(d.name, st));
  }
  return out;
}

/** Moves `from` onto `to`; a folder in the way is removed first when overwriting. */
async function place(from, to, overwrite) {
  if (await exists(to)) {
    if (!overwrite) throw new PluginError('conflict', 'target exists');
    if ((await lstat(to)).isDirectory()) await rm(to, { recursive: true });
  }
  await rename(from, to);
}

const methods = {
  handshake: ({ protocol }) => {
    if (protocol !== PROTOCOL) throw new PluginError('unsupported', `this plugin speaks ${PROTOCOL}`);
    return {
      protocol: PROTOCOL,
      name: 'localdir',
      label: 'Local folder (example plugin)',
      version: '1.0.0',
      service_range: SERVICE_RANGE,
      fields: [{ key: 'path', type: 'string', required: true, root: true, label: 'Folder', placeholder: '/srv/files' }],
      capabilities: { move: true, copy: true, walk: true, ranges: true, etag: false },
      max_name_bytes: 255,
    };
  },
  ping: () => ({}),
  open: async ({ config }) => {
    const p = config?.path;
    if (typeof p !== 'string' || !isAbsolute(p) || p.split(/[\\/]/).includes('..') || resolve(p) === '/')
      throw new PluginError('validation_failed', 'path must be an absolute folder below /', { field: 'path' });
    await mkdir(p, { recursive: true, mode: 0o755 });
    root = resolve(p);
    return {};
  },
  stat: async ({ path }) => {
    const st = await stat(abs(path));
    return entryOf(path === '' ? '' : basename(path), st);
  },
  list: async ({ path }, id) => ({ entries: sendBatches(id, await listDir(path)) }),
  walk: async ({ path }, id) => {
    const entries = [];
    const visit = async (rel, under) => {
      for (const e of await listDir(rel)) {
        const p = under === '' ? e.name : `${under}/${e.name}`;
        entries.push({ ...e, path: p });
        if (e.type === 'dir') await visit(rel === '' ? e.name : `${rel}/${e.name}`, p);
      }
    };
    await visit(path, '');
    return { entries: sendBatches(id, entries) };
  },
  mkdir: async ({ path }) => {
    const p = abs(path);
    await mkdir(p, { recursive: true }).catch((e) => {
      throw e.code === 'EEXIST' || e.code === 'ENOTDIR' ? new PluginError('conflict', 'a file is in the way') : e;
    });
    if (!(await stat(p)).isDirectory()) throw new PluginError('conflict', 'a file is in the way');
    return {};
  },
  delete: async ({ path }) => {
    const p = abs(path);
    if (p === root) throw new PluginError('permission_denied', 'the root stays');
    await lstat(p);
    await rm(p, { recursive: true });
    return {};
  },
  move: async ({ from, to, overwrite }) => {
    const src = abs(from);
    await lstat(src);
    await place(src, abs(to), overwrite);
    return {};
  },
  copy: async ({ from, to, overwrite }) => {
    const src = abs(from);
    const dst = abs(to);
    await lstat(src);
    // Copy beside the target first, so a failed copy leaves nothing half-written.
    const temp = join(dirname(dst), `${TEMP_PREFIX}${randomBytes(6).toString('hex')}`);
    try {
      await cp(src, temp, { recursive: true, errorOnExist: true, force: false });
      await place(temp, dst, overwrite);
    } catch (e) {
      await rm(temp, { recursive: true, force: true });
      throw e;
    }
    return {};
  },
  shutdown: () => {
    setImmediate(() => process.exit(0));
    return {};
  },
};

/** `read`: replies with the size, then streams `body.chunk`s within the host's credit. */
async function startRead(id, { path, range }) {
  const early = {
    cancelled: false,
    cancel() {
      early.cancelled = true;
    },
  };
  streams.set(id, early);
  const p = abs(path);
  const st = await stat(p);
  if (early.cancelled) return;
  if (st.isDirectory()) throw new PluginError('not_found', 'a folder', { path });
  const start = range?.start ?? 0;
  const end = Math.min(range?.end ?? st.size - 1, st.size - 1);
  send({ id, result: { size: st.size } });
  if (end < start) return notify('body.end', { id });
  const rs = createReadStream(p, { start, end, highWaterMark: CHUNK_BYTES });
  const s = {
    credit: WINDOW_BYTES,
    stream: rs,
    ack(bytes) {
      s.credit += bytes;
      if (s.credit > 0 && rs.isPaused()) rs.resume();
    },
    cancel() {
      rs.destroy();
    },
  };
  streams.set(id, s);
  rs.on('data', (buf) => {
    s.credit -= buf.length;
    notify('body.chunk', { id, data: buf.toString('base64') });
    if (s.credit <= 0) rs.pause();
  });
  rs.on('end', () => {
    streams.delete(id);
    notify('body.end', { id });
  });
  rs.on('error', (e) => {
    streams.delete(id);
    const err = fsError(e, path);
    notify('body.error', { id, error: { code: err.code, message: err.message } });
  });
}

/** `write`: receives chunks into a temp file beside the target; on `body.end` renames it into place. */
async function startWrite(id, { path, overwrite = true }) {
  // Chunks may arrive while the checks below run: hold them until the file is open.
  const early = {
    queue: [],
    ended: false,
    cancelled: null,
    chunk(b) {
      early.queue.push(b);
    },
    end() {
      early.ended = true;
    },
    cancel(r) {
      early.cancelled = r ?? 'cancelled';
    },
  };
  streams.set(id, early);
  const p = abs(path);
  if (!(await stat(dirname(p)).catch(() => null))?.isDirectory()) throw new PluginError('not_found', 'parent folder missing', { path });
  if (!overwrite && (await exists(p))) throw new PluginError('conflict', 'target exists', { path });
  const temp = join(dirname(p), `${TEMP_PREFIX}${randomBytes(6).toString('hex')}.part`);
  const ws = createWriteStream(temp, { flags: 'wx' });
  let done = false;
  const fail = async (err) => {
    if (done) return;
    done = true;
    streams.delete(id);
    ws.destroy();
    await rm(temp, { force: true });
    send({ id, error: rpcError(err) });
  };
  ws.on('error', (e) => fail(fsError(e, path)));
  streams.set(id, {
    chunk(buf) {
      ws.write(buf, () => notify('body.ack', { id, bytes: buf.length }));
    },
    end() {
      ws.end(async () => {
        if (done) return;
        try {
          if (overwrite) await rename(temp, p);
          // link() refuses an existing target, so no-overwrite holds even against a racing writer.
          else await link(temp, p).then(() => unlink(temp));
          done = true;
          streams.delete(id);
          send({ id, result: entryOf(basename(p), await stat(p)) });
        } catch (e) {
          await fail(fsError(e, path));
        }
      });
    },
    cancel(reason) {
      void fail(new PluginError('cancelled', reason ?? 'cancelled'));
    },
  });
  const s = streams.get(id);
  if (early.cancelled) return s.cancel(early.cancelled);
  for (const buf of early.queue) s.chunk(buf);
  if (early.ended) s.end();
}

const rpcError = (err) => ({ code: -32000, message: err.message, data: { code: err.code, params: err.params } });

async function handle(msg) {
  const { id, method, params = {} } = msg;
  if (id === undefined) {
    // Notifications: body flow and cancellation.
    const s = streams.get(params.id);
    if (!s) return;
    if (method === 'body.chunk') s.chunk?.(Buffer.from(params.data, 'base64'));
    else if (method === 'body.end') s.end?.();
    else if (method === 'body.ack') s.ack?.(params.bytes);
    else if (method === 'body.error') s.cancel?.(params.error?.message);
    else if (method === 'cancel') {
      streams.delete(params.id);
      s.cancel?.('cancelled by the service');
    }
    return;
  }
  try {
    if (method === 'read') return await startRead(id, params);
    if (method === 'write') return await startWrite(id, params);
    const fn = methods[method];
    if (!fn) return send({ id, error: { code: -32601, message: `unknown method ${method}` } });
    send({ id, result: await fn(params, id) });
  } catch (e) {
    streams.delete(id);
    send({ id, error: rpcError(fsError(e, params.path ?? params.from)) });
  }
}

createInterface({ input: process.stdin, crlfDelay: Infinity })
  .on('line', (line) => {
    if (line.trim() === '') return;
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      process.stderr.write('localdir: unreadable line from the service\n');
      return;
    }
    void handle(msg);
  })
  .on('close', () => process.exit(0));
