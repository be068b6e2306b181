/**
 * Example storage driver from the example store (docs/app-store.md, "Storage
 * drivers"): a read-only view of files a web server lists, over
 * `filedock-storage/1` (docs/plugin-driver-protocol.md). Plain Node 20, no
 * dependencies. A folder is read from its listing page, `<url>/<path>/`:
 * nginx's `autoindex_format json` (`[{name, type: "file"|"directory", mtime,
 * size}]`), or an HTML autoindex page (nginx, Apache: the links are the entries,
 * sizes and dates from a HEAD of each file). A file is read with range GETs.
 * Every change is refused: the storage is read-only.
 */
import { createInterface } from 'node:readline';

const PROTOCOL = 'filedock-storage/1';
const WINDOW_BYTES = 1024 * 1024;
const CHUNK_BYTES = 256 * 1024;
const REQUEST_MS = 30_000;
/** HEADs at once for an HTML listing's file sizes. */
const HEADS_AT_ONCE = 8;

let base = null;
/** Reads in flight by call id: their credit and how to stop them. */
const reads = new Map();

const send = (msg) => process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...msg })}\n`);
const notify = (method, params) => send({ method, params });

class PluginError extends Error {
  constructor(code, message, params = {}) {
    super(message ?? code);
    this.code = code;
    this.params = params;
  }
}

/** The URL of a clean relative path (a folder's ends with `/`), refusing anything that would leave the base. */
function urlOf(rel, dir) {
  if (!base) throw new PluginError('storage_unreachable', 'open was not called');
  if (typeof rel !== 'string' || rel.includes('\0') || rel.startsWith('/') || rel.split('/').includes('..')) throw new PluginError('bad_path', 'bad path');
  const p = rel === '' ? '' : rel.split('/').map(encodeURIComponent).join('/');
  return new URL(p + (dir && p ? '/' : ''), base).href;
}

async function request(url, o = {}) {
  let res;
  try {
    res = await fetch(url, { ...o, redirect: 'follow', signal: o.signal ?? AbortSignal.timeout(REQUEST_MS) });
  } catch (e) {
    if (e.name === 'AbortError' && o.signal?.aborted) throw new PluginError('cancelled', 'cancelled');
    throw new PluginError('storage_unreachable', `${url}: ${e.cause?.code ?? e.message}`);
  }
  if (res.status === 404 || res.status === 410) throw new PluginError('not_found', `${url}: ${res.status}`);
  if (res.status === 401 || res.status === 403) throw new PluginError('permission_denied', `${url}: ${res.status}`);
  if (res.status >= 400) throw new PluginError('storage_unreachable', `${url}: HTTP ${res.status}`);
  return res;
}

const timeOf = (text) => {
  const t = Date.parse(text ?? '');
  return Number.isFinite(t) ? t : 0;
};

/** A name the listing may hold: one path segment, not a parent or sort link. */
const plainName = (n) => n !== '' && n !== '.' && n !== '..' && !n.includes('/') && !n.includes('\0');

/** The entries of an HTML autoindex: relative links to children; files get size and date from a HEAD. */
async function htmlEntries(html, dirUrl) {
  const names = new Map();
  for (const m of html.matchAll(/<a\s[^>]*href="([^"?#]+)"/gi)) {
    const href = m[1].replace(/&amp;/g, '&');
    if (/^[a-z]+:|^\//i.test(href)) continue;
    const isDir = href.endsWith('/');
    let name;
    try {
      name = decodeURIComponent(isDir ? href.slice(0, -1) : href);
    } catch {
      continue;
    }
    if (plainName(name)) names.set(name, isDir);
  }
  const out = [...names].map(([name, isDir]) => ({ name, type: isDir ? 'dir' : 'file', size: 0, mtime: 0 }));
  const files = out.filter((e) => e.type === 'file');
  for (let i = 0; i < files.length; i += HEADS_AT_ONCE)
    await Promise.all(
      files.slice(i, i + HEADS_AT_ONCE).map(async (e) => {
        const res = await request(new URL(encodeURIComponent(e.name), dirUrl).href, { method: 'HEAD' }).catch(() => null);
        e.size = Number(res?.headers.get('content-length') ?? 0);
        e.mtime = timeOf(res?.headers.get('last-modified'));
      }),
    );
  return out;
}

async function listDir(rel) {
  const url = urlOf(rel, true);
  const res = await request(url, { headers: { accept: 'application/json, text/html;q=0.9' } });
  const text = await res.text();
  if (!(res.headers.get('content-type') ?? '').includes('json')) return htmlEntries(text, url);
  let rows;
  try {
    rows = JSON.parse(text);
  } catch {
    throw new PluginError('storage_unreachable', `${url}: the listing is not JSON`);
  }
  if (!Array.isArray(rows)) throw new PluginError('storage_unreachable', `${url}: the listing is not a JSON array`);
  return rows
    .filter((r) => r && typeof r.name === 'string' && plainName(r.name) && (r.type === 'file' || r.type === 'directory'))
    .map((r) => ({ name: r.name, type: r.type === 'directory' ? 'dir' : 'file', size: r.type === 'file' ? Number(r.size) || 0 : 0, mtime: timeOf(r.mtime) }));
}

/** Sends all but the last batch of a long listing as `entries` notifications; returns the last batch for the reply. */
function sendBatches(id, entries, size = 1000) {
  let at = 0;
  for (; entries.length - at > size; at += size) notify('entries', { id, entries: entries.slice(at, at + size) });
  return entries.slice(at);
}

const readOnly = () => {
  throw new PluginError('permission_denied', 'this storage is read-only');
};

const methods = {
  handshake: ({ protocol }) => {
    if (protocol !== PROTOCOL) throw new PluginError('unsupported', `this driver speaks ${PROTOCOL}`);
    return {
      protocol: PROTOCOL,
      name: 'http-index',
      label: 'Web folder listing (read-only)',
      version: '1.0.0',
      service_range: '>=0.1.0 <1.0.0',
      fields: [
        {
          key: 'url',
          type: 'string',
          required: true,
          root: true,
          label: 'Listing address',
          placeholder: 'https://files.example/pub/',
          help: 'A folder a web server lists (nginx autoindex, JSON or HTML; Apache)',
        },
      ],
      capabilities: { write: false, move: false, copy: false, walk: false, ranges: true, etag: false },
      max_name_bytes: 255,
    };
  },
  ping: () => ({}),
  open: async ({ config }) => {
    let u;
    try {
      u = new URL(config?.url);
    } catch {
      throw new PluginError('validation_failed', 'url must be an http(s) address', { field: 'url' });
    }
    if (!['http:', 'https:'].includes(u.protocol)) throw new PluginError('validation_failed', 'url must be an http(s) address', { field: 'url' });
    if (!u.pathname.endsWith('/')) u.pathname += '/';
    base = u.href;
    return {};
  },
  stat: async ({ path }) => {
    if (path === '') return { name: '', type: 'dir', size: 0, mtime: 0 };
    const at = path.lastIndexOf('/');
    const name = path.slice(at + 1);
    const hit = (await listDir(at < 0 ? '' : path.slice(0, at))).find((e) => e.name === name);
    if (!hit) throw new PluginError('not_found', 'no such entry', { path });
    return hit;
  },
  list: async ({ path }, id) => ({ entries: sendBatches(id, await listDir(path)) }),
  write: readOnly,
  mkdir: readOnly,
  delete: readOnly,
  move: readOnly,
  copy: readOnly,
  shutdown: () => {
    setImmediate(() => process.exit(0));
    return {};
  },
};

/** `read`: a GET with a Range header; replies with the whole file's size, then streams `body.chunk`s within the service's credit. */
async function startRead(id, { path, range }) {
  const abort = new AbortController();
  const s = { credit: WINDOW_BYTES, wake: null, abort };
  reads.set(id, s);
  const start = range?.start ?? 0;
  const headers = range ? { range: `bytes=${start}-${range.end ?? ''}` } : {};
  const timer = setTimeout(() => abort.abort(), REQUEST_MS);
  const res = await request(urlOf(path, false), { headers, signal: abort.signal }).finally(() => clearTimeout(timer));
  const total = Number((res.headers.get('content-range') ?? '').split('/')[1] ?? res.headers.get('content-length'));
  const size = res.status === 206 ? total : Number(res.headers.get('content-length') ?? 0);
  send({ id, result: { size: Number.isFinite(size) ? size : 0 } });
  // A server that ignores Range answers 200 with the whole file: skip to the start and stop at the end ourselves.
  let skip = res.status === 206 ? 0 : start;
  let left = range?.end === undefined || range?.end === null ? Infinity : range.end - start + 1;
  try {
    for await (const raw of res.body) {
      let buf = Buffer.from(raw);
      if (skip) {
        const n = Math.min(skip, buf.length);
        skip -= n;
        buf = buf.subarray(n);
      }
      if (buf.length > left) buf = buf.subarray(0, left);
      for (let at = 0; at < buf.length; at += CHUNK_BYTES) {
        while (s.credit <= 0) await new Promise((r) => (s.wake = r));
        if (abort.signal.aborted) return;
        const part = buf.subarray(at, at + CHUNK_BYTES);
        s.credit -= part.length;
        notify('body.chunk', { id, data: part.toString('base64') });
      }
      left -= buf.length;
      if (left <= 0) break;
    }
    if (!abort.signal.aborted) notify('body.end', { id });
  } catch (e) {
    if (!abort.signal.aborted) notify('body.error', { id, error: { code: 'storage_unreachable', message: e.message } });
  } finally {
    reads.delete(id);
  }
}

const rpcError = (err) =>
  err instanceof PluginError
    ? { code: -32000, message: err.message, data: { code: err.code, params: err.params } }
    : { code: -32000, message: String(err?.message ?? err), data: { code: 'storage_unreachable' } };

async function handle(msg) {
  const { id, method, params = {} } = msg;
  if (id === undefined) {
    const s = reads.get(params.id);
    if (!s) return;
    if (method === 'body.ack') {
      s.credit += params.bytes;
      s.wake?.();
    } else if (method === 'cancel') {
      reads.delete(params.id);
      s.abort.abort();
      s.wake?.();
    }
    return;
  }
  try {
    if (method === 'read') return await startRead(id, params);
    const fn = methods[method];
    if (!fn) return send({ id, error: { code: -32601, message: `unknown method ${method}` } });
    send({ id, result: await fn(params, id) });
  } catch (e) {
    reads.delete(id);
    send({ id, error: rpcError(e) });
  }
}

createInterface({ input: process.stdin, crlfDelay: Infinity })
  .on('line', (line) => {
    if (line.trim() === '') return;
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      process.stderr.write('http-index: unreadable line from the service\n');
      return;
    }
    void handle(msg);
  })
  .on('close', () => process.exit(0));
