/**
 * The WebDAV methods (RFC 4918 classes 1 and 2) over the gateway tree. Each
 * resolves its paths through `DavRequest`, checks locks and the `If` header,
 * then makes one tree call (so access, key roots, the write gate, the trash
 * and exact move/copy targets are the file service's) and keeps dead
 * properties and locks in step with the node.
 */
import { Readable } from 'node:stream';
import { AppError } from '../../errors';
import { etagOf, type OpenFile } from '../../files';
import { DavError } from './errors';
import { lockTimeout, type LockTable } from './locks';
import { LIVE, MULTISTATUS_CLOSE, MULTISTATUS_OPEN, PropfindError, activeLock, propRequest, propXml, responseXml, type PropRequest } from './multistatus';
import type { DavPlace, DeadProps } from './props.repo';
import { DavRequest, hrefOf, pathOfUrl, type DavCtx } from './request';
import { DAV, child, inner } from './xml';

export interface MethodDeps {
  props: DeadProps;
  locks: LockTable;
  /** Serves a file's bytes (ranges, validators, HEAD): the HTTP layer's `serveFile`. */
  serve: (ctx: DavCtx, f: OpenFile) => Promise<void>;
}

type Method = (r: DavRequest, d: MethodDeps) => Promise<void>;

export const ALLOW = 'OPTIONS, GET, HEAD, PUT, DELETE, PROPFIND, PROPPATCH, MKCOL, COPY, MOVE, LOCK, UNLOCK';

const isRoot = (path: string) => path === '/' || path.lastIndexOf('/') === 0;
/** The node at `path` with its storage's tenant (its dead properties are that tenant's rows). */
const place = (r: DavRequest, path = r.path): DavPlace => {
  const t = r.tree.files.target(path, 'viewer', { passage: true });
  return { ...t.place, tenant_id: t.storage.tenant_id };
};
const xmlBody = (r: DavRequest, status: number, body: string) => {
  r.ctx.status = status;
  r.ctx.type = 'application/xml; charset=utf-8';
  r.ctx.body = `<?xml version="1.0" encoding="utf-8"?>\n${body}`;
};

const propfind: Method = async (r, d) => {
  const depth = r.ctx.get('depth') || '1';
  if (depth.toLowerCase() === 'infinity') throw new DavError(403, 'Depth: infinity is not served; ask for one level at a time.', 'propfind-finite-depth');
  if (depth !== '0' && depth !== '1') throw new DavError(400, 'Depth must be 0 or 1.');
  let req: PropRequest;
  try {
    req = propRequest(await r.xml());
  } catch (e) {
    if (e instanceof PropfindError) throw new DavError(400, 'The body is not a DAV:propfind.');
    throw e;
  }
  const self = await r.tree.stat(r.path);
  const selfKey = r.key();
  const selfPlace = r.path === '/' ? null : place(r);
  const lockHref = (p: string) => (l: { root: string }) => l.root || p;
  const selfXml = responseXml(
    hrefOf(r.path, self.type === 'dir', r.base),
    { ...self, name: r.path === '/' ? '' : self.name },
    req,
    selfPlace ? await d.props.of(selfPlace) : [],
    r.locks.covering(selfKey),
    lockHref(hrefOf(r.path, self.type === 'dir', r.base)),
  );
  const children = depth === '1' && self.type === 'dir' ? r.tree.list(r.path) : null;
  const dead = children && selfPlace ? await d.props.children(selfPlace) : new Map();
  const anyLocks = r.locks.size > 0;
  const base = r.path === '/' ? '' : r.path;
  async function* body() {
    yield MULTISTATUS_OPEN + selfXml;
    if (!children) return void (yield MULTISTATUS_CLOSE);
    let batch = '';
    for await (const e of children) {
      const path = `${base}/${e.name}`;
      const rel = selfPlace ? (selfPlace.rel ? `${selfPlace.rel}/${e.name}` : e.name) : '';
      const locks = anyLocks ? r.locks.covering(r.path === '/' ? r.key(path) : `${selfKey.endsWith('/') ? selfKey : selfKey + '/'}${e.name}`) : [];
      const href = hrefOf(path, e.type === 'dir', r.base);
      batch += responseXml(href, e, req, dead.get(rel) ?? [], locks, lockHref(href));
      if (batch.length > 64 * 1024) {
        yield batch;
        batch = '';
      }
    }
    yield batch + MULTISTATUS_CLOSE;
  }
  r.ctx.status = 207;
  r.ctx.type = 'application/xml; charset=utf-8';
  r.ctx.body = Readable.from(body());
};

const proppatch: Method = async (r, d) => {
  if (r.path === '/') throw new DavError(403, 'The top level has no properties.');
  await r.tree.stat(r.path);
  r.tree.files.target(r.path, 'editor');
  await r.checkIf();
  r.locks.check(r.key(), r.tokens(), false);
  const body = await r.xml();
  if (!body || body.ns !== DAV || body.name !== 'propertyupdate') throw new DavError(400, 'The body is not a DAV:propertyupdate.');
  const ops: Array<{ ns: string; name: string; value: string | null }> = [];
  for (const op of body.children) {
    if (op.ns !== DAV || (op.name !== 'set' && op.name !== 'remove')) continue;
    for (const p of child(op, 'prop')?.children ?? []) ops.push({ ns: p.ns, name: p.name, value: op.name === 'set' ? inner(p) : null });
  }
  const refused = ops.filter((o) => o.ns === DAV && LIVE.includes(o.name));
  if (!refused.length) await d.props.patch(place(r), ops);
  const stat = (o: (typeof ops)[number]) => (!refused.length ? '200 OK' : refused.includes(o) ? '403 Forbidden' : '424 Failed Dependency');
  const groups = new Map<string, string[]>();
  for (const o of ops) groups.set(stat(o), [...(groups.get(stat(o)) ?? []), propXml(o.ns, o.name, null)]);
  const propstats = [...groups].map(([s, props]) => `<D:propstat><D:prop>${props.join('')}</D:prop><D:status>HTTP/1.1 ${s}</D:status></D:propstat>`);
  xmlBody(
    r,
    207,
    `<D:multistatus xmlns:D="DAV:"><D:response><D:href>${hrefOf(r.path, false, r.base)}</D:href>${propstats.join('')}</D:response></D:multistatus>`,
  );
};

const mkcol: Method = async (r, d) => {
  if (Number(r.ctx.get('content-length') || 0) > 0 || r.ctx.get('transfer-encoding')) throw new DavError(415, 'MKCOL takes no body.');
  if (isRoot(r.path) || (await r.statOrNull())) throw new DavError(405, 'Something by that name exists.');
  await r.needParent();
  await r.checkIf();
  r.locks.check(r.key(), r.tokens(), false);
  await r.tree.mkdir(r.path);
  await d.props.drop(place(r));
  r.ctx.status = 201;
};

const get: Method = async (r, d) => {
  const node = await r.tree.stat(r.path);
  if (node.type === 'dir') {
    r.ctx.status = 200;
    r.ctx.type = 'text/plain; charset=utf-8';
    r.ctx.body = r.ctx.method === 'HEAD' ? null : 'This is a WebDAV folder: open it with a WebDAV client (Finder, Windows Explorer, GNOME Files, rclone).\n';
    return;
  }
  await d.serve(r.ctx, await r.tree.open(r.path));
};

const put: Method = async (r, d) => {
  if (isRoot(r.path)) throw new DavError(405, 'Files go inside a storage.');
  if (r.ctx.get('content-range')) throw new DavError(400, 'Partial PUT is not supported.');
  const existing = await r.statOrNull();
  if (existing?.type === 'dir') throw new DavError(405, 'A folder has that name.');
  if (!existing) await r.needParent();
  const etag = existing && etagOf(existing.size, existing.mtime, existing.etag);
  const ifMatch = r.ctx.get('if-match');
  const ifNone = r.ctx.get('if-none-match');
  if (
    ifMatch &&
    (!etag ||
      (ifMatch.trim() !== '*' &&
        !ifMatch
          .split(',')
          .map((s) => s.trim())
          .includes(etag)))
  )
    throw new DavError(412, 'If-Match does not match.');
  if (
    ifNone &&
    existing &&
    (ifNone.trim() === '*' ||
      ifNone
        .split(',')
        .map((s) => s.trim())
        .includes(etag!))
  )
    throw new DavError(412, 'If-None-Match: the file exists.');
  await r.checkIf();
  r.locks.check(r.key(), r.tokens(), false);
  const abort = new AbortController();
  const gone = () => {
    if (!r.ctx.req.complete) abort.abort();
  };
  r.ctx.req.once('close', gone);
  const length = r.ctx.get('content-length');
  try {
    const node = await r.tree.write(r.path, r.ctx.req, { size: length ? Number(length) : undefined, overwrite: true, signal: abort.signal });
    r.ctx.set('ETag', etagOf(node.size, node.mtime, node.etag));
  } finally {
    r.ctx.req.off('close', gone);
  }
  if (!existing) await d.props.drop(place(r));
  r.ctx.status = existing ? 204 : 201;
};

const del: Method = async (r, d) => {
  if (isRoot(r.path)) throw new DavError(403, 'A storage cannot be deleted here.');
  const depth = r.ctx.get('depth');
  if (depth && depth.toLowerCase() !== 'infinity') throw new DavError(400, 'DELETE takes Depth: infinity.');
  await r.tree.stat(r.path);
  await r.checkIf();
  const key = r.key();
  r.locks.check(key, r.tokens(), true);
  const p = place(r);
  await r.tree.delete(r.path);
  await d.props.drop(p);
  r.locks.dropBelow(key);
  r.ctx.status = 204;
};

/** COPY and MOVE: `Destination`, `Overwrite`, exact targets (the core), 201 new / 204 replaced. */
const transfer =
  (move: boolean): Method =>
  async (r, d) => {
    const dest = r.ctx.get('destination');
    if (!dest) throw new DavError(400, 'The Destination header is missing.');
    const to = pathOfUrl(dest, r.ctx.host, r.base);
    const ow = (r.ctx.get('overwrite') || 'T').toUpperCase();
    if (ow !== 'T' && ow !== 'F') throw new DavError(400, 'Overwrite must be T or F.');
    const depth = (r.ctx.get('depth') || 'infinity').toLowerCase();
    if (depth !== 'infinity' && (move || depth !== '0')) throw new DavError(400, 'Depth must be infinity (or 0 for COPY).');
    if (isRoot(r.path) || isRoot(to)) throw new DavError(403, 'A storage cannot be moved or replaced here.');
    const src = await r.tree.stat(r.path);
    const fromKey = r.key();
    const toKey = r.key(to);
    if (fromKey === toKey) throw new DavError(403, 'The source and the destination are the same.');
    if (toKey.startsWith(fromKey + '/')) throw new DavError(403, 'A folder cannot go inside itself.');
    await r.needParent(to);
    const existing = await r.statOrNull(to);
    if (existing && ow === 'F') throw new DavError(412, 'The destination exists and Overwrite is F.');
    await r.checkIf();
    if (move) r.locks.check(fromKey, r.tokens(), true);
    r.locks.check(toKey, r.tokens(), true);
    const fromPlace = place(r);
    if (!move && depth === '0' && src.type === 'dir') {
      if (existing) await r.tree.delete(to);
      await r.tree.mkdir(to);
    } else if (move) await r.tree.move(r.path, to, ow === 'T');
    else await r.tree.copy(r.path, to, ow === 'T');
    await d.props.transfer(fromPlace, place(r, to), move);
    if (move) r.locks.dropBelow(fromKey);
    r.ctx.status = existing ? 204 : 201;
  };

const lock: Method = async (r, d) => {
  if (r.path === '/') throw new DavError(403, 'The top level cannot be locked.');
  r.tree.files.target(r.path, 'editor');
  const body = await r.xml();
  const key = r.key();
  const timeoutS = lockTimeout(r.ctx.get('timeout'));
  if (!body) {
    await r.checkIf();
    const tokens = r.tokens();
    const held = r.locks.covering(key).find((l) => tokens.has(l.token));
    if (!held) throw new DavError(412, 'No lock of yours to refresh here.', 'lock-token-matches-request-uri');
    r.locks.refresh(held, timeoutS);
    return xmlBody(r, 200, `<D:prop xmlns:D="DAV:"><D:lockdiscovery>${activeLock(held, held.root)}</D:lockdiscovery></D:prop>`);
  }
  if (body.ns !== DAV || body.name !== 'lockinfo') throw new DavError(400, 'The body is not a DAV:lockinfo.');
  const scope = child(child(body, 'lockscope'), 'shared') ? 'shared' : child(child(body, 'lockscope'), 'exclusive') ? 'exclusive' : null;
  if (!scope || !child(child(body, 'locktype'), 'write')) throw new DavError(400, 'Only write locks, exclusive or shared.');
  const depth = (r.ctx.get('depth') || 'infinity').toLowerCase();
  if (depth !== '0' && depth !== 'infinity') throw new DavError(400, 'Depth must be 0 or infinity.');
  const existing = await r.statOrNull();
  if (!existing) await r.needParent();
  await r.checkIf();
  const owner = child(body, 'owner');
  const userId = (r.tree.actor as { principal?: { id: number } }).principal?.id ?? 0;
  const held = r.locks.take({
    key,
    root: hrefOf(r.path, existing?.type === 'dir', r.base),
    scope,
    depth: depth as '0' | 'infinity',
    owner: owner ? inner(owner) : '',
    timeoutS,
    userId,
  });
  if (!existing) {
    try {
      await r.tree.write(r.path, Readable.from([]), { size: 0, overwrite: false });
      await d.props.drop(place(r));
    } catch (e) {
      r.locks.release(held.token);
      throw e;
    }
  }
  r.ctx.set('Lock-Token', `<${held.token}>`);
  xmlBody(r, existing ? 200 : 201, `<D:prop xmlns:D="DAV:"><D:lockdiscovery>${activeLock(held, held.root)}</D:lockdiscovery></D:prop>`);
};

const unlock: Method = async (r) => {
  const m = /^\s*<([^>]+)>\s*$/.exec(r.ctx.get('lock-token'));
  if (!m) throw new DavError(400, 'The Lock-Token header is missing.');
  const held = r.locks.get(m[1]);
  if (!held || !r.locks.covering(r.key()).includes(held)) throw new DavError(409, 'That lock does not cover this item.', 'lock-token-matches-request-uri');
  const userId = (r.tree.actor as { principal?: { id: number } }).principal?.id ?? 0;
  if (held.userId !== userId) throw new AppError('forbidden');
  r.locks.release(held.token);
  r.ctx.status = 204;
};

export const METHODS: Record<string, Method> = {
  PROPFIND: propfind,
  PROPPATCH: proppatch,
  MKCOL: mkcol,
  GET: get,
  HEAD: get,
  PUT: put,
  DELETE: del,
  COPY: transfer(false),
  MOVE: transfer(true),
  LOCK: lock,
  UNLOCK: unlock,
};
