/**
 * The object operations: GetObject/HeadObject (ranges, conditional headers,
 * read through `OpenFile` with the local fast path), PutObject (streamed
 * through the write gate; a folder marker `key/` with an empty body makes a
 * folder), DeleteObject(s) (into the trash) and CopyObject. Every path goes
 * through `objectPath` and every call through the caller's tree, so access,
 * key roots and announcements are the file service's.
 */
import { pipeline } from 'node:stream/promises';
import { isAppError } from '../../errors';
import { sendLocalRange } from '../../lib/send-range';
import { ifRangeAllows, notModified, planRange, type OpenFile } from '../../files';
import { splitLast } from '../paths';
import { S3Error, toS3Error } from './errors';
import { EMPTY_ETAG } from './listing';
import { bodyOf, iso, mustHaveBucket, objectPath, sendEmpty, sendXml, smallBody, type S3Req } from './request';
import { safeDecode } from './sigv4';
import { childrenNamed, childText, MAX_XML_BYTES, parseXml } from './xml';

/** Query parameters of a GET that override response headers (presigned downloads). */
const OVERRIDES: Record<string, string> = {
  'response-content-type': 'Content-Type',
  'response-content-disposition': 'Content-Disposition',
  'response-content-language': 'Content-Language',
  'response-content-encoding': 'Content-Encoding',
  'response-cache-control': 'Cache-Control',
  'response-expires': 'Expires',
};

export async function getObject(r: S3Req): Promise<void> {
  await mustHaveBucket(r);
  const path = objectPath(r.bucket, r.key);
  if (r.key.endsWith('/')) return folderMarker(r, path);
  const f = await r.tree.open(path).catch(noSuchKey);
  const h = r.req.headers;
  const base: Record<string, string | number> = {
    ETag: f.etag,
    'Last-Modified': new Date(f.mtime).toUTCString(),
    'Accept-Ranges': 'bytes',
    'x-amz-request-id': r.requestId,
  };
  if (failsPrecondition(h['if-match'], h['if-unmodified-since'], f))
    throw new S3Error('PreconditionFailed', undefined, { Condition: h['if-match'] ? 'If-Match' : 'If-Unmodified-Since' });
  if (notModified({ ifNoneMatch: h['if-none-match'], ifModifiedSince: h['if-modified-since'] }, f.etag, f.mtime)) {
    r.res.writeHead(304, base);
    r.res.end();
    return;
  }
  const plan = ifRangeAllows(one(h['if-range']), f.etag, f.mtime) ? planRange(h.range, f.size) : ({ kind: 'full' } as const);
  if (plan.kind === 'unsatisfiable') throw new S3Error('InvalidRange', undefined, { RangeRequested: String(h.range), ActualObjectSize: String(f.size) });
  const span = plan.kind === 'partial' ? plan.spans[0] : undefined; // S3 serves one range
  const headers: Record<string, string | number> = { ...base, 'Content-Type': f.mime, 'Content-Length': span ? span.end - span.start + 1 : f.size };
  if (span) headers['Content-Range'] = `bytes ${span.start}-${span.end}/${f.size}`;
  for (const [q, name] of Object.entries(OVERRIDES)) if (r.query.has(q)) headers[name] = r.query.get(q)!;
  r.res.writeHead(span ? 206 : 200, headers);
  if (r.method === 'HEAD' || f.size === 0) return void r.res.end();
  const local = await f.localFile();
  try {
    if (local) {
      await sendLocalRange(r.res, local, span?.start ?? 0, span?.end ?? f.size - 1);
      r.res.end();
    } else await pipeline(await f.read(span, r.signal), r.res);
  } catch {
    r.res.destroy(); // the client left or the storage failed mid-way: the length tells the client it is short
  }
}

export async function putObject(r: S3Req): Promise<void> {
  await mustHaveBucket(r);
  const path = objectPath(r.bucket, r.key);
  if (r.req.headers['x-amz-copy-source'] !== undefined) return copyObject(r, path);
  const body = bodyOf(r);
  if (r.key.endsWith('/')) {
    if (body.size !== 0) throw new S3Error('InvalidObjectName', 'A key ending in "/" is a folder: its body must be empty.');
    await r.tree.mkdir(path);
    return sendEmpty(r, 200, { ETag: EMPTY_ETAG });
  }
  if (body.size === undefined) throw new S3Error('MissingContentLength');
  let failure: unknown;
  body.stream.once('error', (e) => (failure = e));
  await ensureParent(r, path);
  try {
    await r.tree.write(path, body.stream, { size: body.size, overwrite: true, signal: r.signal });
  } catch (e) {
    throw failure ?? e;
  }
  sendEmpty(r, 200, { ETag: `"${body.md5()}"` });
}

export async function deleteObject(r: S3Req): Promise<void> {
  await mustHaveBucket(r);
  await removeKey(r, r.key);
  sendEmpty(r, 204);
}

/** DeleteObjects: up to 1000 keys; per-key results (errors only when `Quiet`). */
export async function deleteObjects(r: S3Req): Promise<void> {
  await mustHaveBucket(r);
  const doc = parseXml(await smallBody(r, MAX_XML_BYTES));
  if (!doc || doc.name !== 'Delete') throw new S3Error('MalformedXML');
  const keys = childrenNamed(doc, 'Object').map((o) => childText(o, 'Key'));
  if (keys.length === 0 || keys.length > 1000 || keys.some((k) => !k)) throw new S3Error('MalformedXML', 'Between 1 and 1000 objects, each with a Key.');
  const quiet = childText(doc, 'Quiet') === 'true';
  const deleted: Array<{ Key: string }> = [];
  const errors: Array<{ Key: string; Code: string; Message: string }> = [];
  for (const key of keys as string[]) {
    try {
      await removeKey(r, key);
      if (!quiet) deleted.push({ Key: key });
    } catch (e) {
      const s = toS3Error(e);
      errors.push({ Key: key, Code: s.code, Message: s.message });
    }
  }
  sendXml(r, 'DeleteResult', { Deleted: deleted, Error: errors });
}

/** Makes sure the folder that will hold `path` exists (S3 has no folders to create first). */
export async function ensureParent(r: S3Req, path: string): Promise<void> {
  const { parent } = splitLast(path);
  if (parent.split('/').length > 2) await r.tree.files.ensureFolder(parent);
}

/** Deletes one key: a missing one is not an error (as on S3); a folder marker removes only an empty folder. */
async function removeKey(r: S3Req, key: string): Promise<void> {
  const path = objectPath(r.bucket, key);
  try {
    if (key.endsWith('/')) {
      const it = r.tree.list(path);
      const first = await it.next();
      await it.return(undefined);
      if (!first.done) return; // other keys still share the prefix: the folder stays
    } else if ((await r.tree.stat(path)).type === 'dir') return; // a file key never names a folder
    await r.tree.delete(path);
  } catch (e) {
    if (isAppError(e) && e.code === 'not_found') return;
    throw e;
  }
}

/** CopyObject: `x-amz-copy-source` (`/bucket/key`, URL-encoded) to this key, replacing it. */
async function copyObject(r: S3Req, to: string): Promise<void> {
  const raw = safeDecode(String(r.req.headers['x-amz-copy-source']).split('?')[0]).replace(/^\//, '');
  const slash = raw.indexOf('/');
  if (slash <= 0 || slash === raw.length - 1) throw new S3Error('InvalidArgument', 'x-amz-copy-source must be <bucket>/<key>.');
  const srcBucket = raw.slice(0, slash);
  await mustHaveBucket(r, srcBucket);
  const from = objectPath(srcBucket, raw.slice(slash + 1));
  if (r.key.endsWith('/') || raw.endsWith('/')) throw new S3Error('InvalidRequest', 'Folders are not copied as objects.');
  const src = await r.tree.open(from).catch(noSuchKey);
  if (failsPrecondition(one(r.req.headers['x-amz-copy-source-if-match']), r.req.headers['x-amz-copy-source-if-unmodified-since'] as string | undefined, src))
    throw new S3Error('PreconditionFailed');
  // Copying onto itself (a metadata change on S3) leaves the bytes as they are.
  if (from !== to) {
    await ensureParent(r, to);
    await r.tree.copy(from, to, true);
  }
  const done = await r.tree.open(to);
  sendXml(r, 'CopyObjectResult', { LastModified: iso(done.mtime), ETag: done.etag });
}

/** A `key/` read: the folder as an empty object. */
async function folderMarker(r: S3Req, path: string): Promise<void> {
  const e = await r.tree.stat(path).catch(noSuchKey);
  if (e.type !== 'dir') throw new S3Error('NoSuchKey');
  sendEmpty(r, 200, { ETag: EMPTY_ETAG, 'Last-Modified': new Date(e.mtime).toUTCString(), 'Content-Type': 'application/x-directory' });
}

/** If-Match / If-Unmodified-Since that do not hold (412). */
function failsPrecondition(ifMatch: string | undefined, ifUnmodifiedSince: string | undefined, f: Pick<OpenFile, 'etag' | 'mtime'>): boolean {
  if (ifMatch) return !ifMatch.split(',').some((t) => t.trim() === '*' || t.trim() === f.etag);
  if (ifUnmodifiedSince) {
    const t = Date.parse(ifUnmodifiedSince);
    return !Number.isNaN(t) && Math.floor(f.mtime / 1000) > Math.floor(t / 1000);
  }
  return false;
}

const one = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v.join(',') : v);

function noSuchKey(e: unknown): never {
  if (isAppError(e) && e.code === 'not_found') throw new S3Error('NoSuchKey');
  throw e;
}
