/**
 * The S3-compatible API on its own listener (`SERVICE_S3_LISTEN`), path-style
 * (`/<bucket>/<key>`): buckets are the storages the caller can open (by name
 * or uid), keys are paths inside them. Every request is signed with SigV4 by
 * an API key's S3 credentials (sigv4.ts); the operations (objects.ts,
 * listing.ts, multipart.ts) work on the caller's gateway tree, and every
 * refusal leaves as S3 XML from the one table in errors.ts.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { listenOn, type Listening } from '../listen';
import { join } from 'node:path';
import type { Db } from '../../db';
import type { GatewayCore } from '..';
import { S3Error, sendError, toS3Error } from './errors';
import { delimiterOf, decodeToken, encodeToken, maxKeys, S3Listing } from './listing';
import { Multipart } from './multipart';
import { deleteObject, deleteObjects, getObject, putObject } from './objects';
import { iso, mustHaveBucket, sendXml, type S3Req } from './request';
import { ReplayGuard } from './replay';
import { parseAmzDate, readClaim, safeDecode, uriEncode, verify } from './sigv4';

export interface S3GatewayDeps {
  core: GatewayCore;
  db: Db;
  /** The data folder's staging directory (multipart parts live in `s3/` below it). */
  stagingDir: string;
  /** `host:port` to listen on. */
  listen: string;
  /** A connection with no byte in either direction for this long is closed (0 = never); a steady transfer of any length is never cut. */
  idleTimeoutMs: number;
  log: { info(m: string): void; error(m: string, e?: unknown): void };
}

export interface S3Gateway {
  port: number;
  url: string;
  close(): Promise<void>;
}

/** Starts the listener and reports it to the registry; null (reported and logged) when it cannot listen. */
export async function startS3Gateway(d: S3GatewayDeps): Promise<S3Gateway | null> {
  const listing = new S3Listing(d.db);
  const multipart = new Multipart(join(d.stagingDir, 's3'));
  const replay = new ReplayGuard();
  await multipart.sweep();
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => void handle(req, res));
  // Node's default cuts any request after 5 minutes: a multi-GiB part on a slow link would never finish.
  server.requestTimeout = 0;
  server.setTimeout(d.idleTimeoutMs);
  server.on('connection', (s) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  let at: Listening;
  try {
    at = await listenOn(server, d.listen, 'http');
  } catch (e) {
    // A taken port must not keep the rest of the service down: the admin sees why in the gateways view.
    d.core.registry.listener({ protocol: 's3', enabled: true, listen: d.listen, url: null, error: (e as Error).message });
    d.log.error(`S3 gateway cannot listen on ${d.listen}`, e);
    return null;
  }
  const { port, url } = at;
  d.core.registry.listener({ protocol: 's3', enabled: true, listen: at.listen, url, error: null });
  d.log.info(`S3 gateway on ${url}`);

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const requestId = randomBytes(8).toString('hex').toUpperCase();
    const raw = req.url ?? '/';
    const q = raw.indexOf('?');
    const rawPath = q < 0 ? raw : raw.slice(0, q);
    const rawQuery = q < 0 ? '' : raw.slice(q + 1);
    try {
      const query = new URLSearchParams(rawQuery);
      const claim = readClaim({ method: req.method ?? 'GET', rawPath, rawQuery, headers: req.headers }, query);
      if (!claim) throw new S3Error('AccessDenied', "Anonymous requests are not accepted: sign with an API key's S3 credentials.");
      const ip = req.socket.remoteAddress ?? '';
      const key = await d.core.auth.s3Key(claim.accessKeyId, { ip, ua: String(req.headers['user-agent'] ?? 's3') });
      if (!key) throw new S3Error('InvalidAccessKeyId');
      const signingKey = verify({ method: req.method ?? 'GET', rawPath, rawQuery, headers: req.headers }, claim, key.secret);
      key.used();
      const tracked = !claim.presigned && ['PUT', 'POST', 'DELETE'].includes(req.method ?? '');
      if (tracked && replay.replayed(claim.signature)) throw new S3Error('AccessDenied', 'This signed request was already used (replay).');
      const tree = d.core.tree(key.actor, 's3');
      d.core.registry.touch('s3', tree.who, ip);
      const path = safeDecode(rawPath);
      const slash = path.indexOf('/', 1);
      const abort = new AbortController();
      res.once('close', () => abort.abort());
      const r: S3Req = {
        req,
        res,
        query,
        tree,
        claim,
        signingKey,
        requestId,
        signal: abort.signal,
        method: req.method ?? 'GET',
        bucket: slash < 0 ? path.slice(1) : path.slice(1, slash),
        key: slash < 0 ? '' : path.slice(slash + 1),
      };
      await route(r);
      if (tracked && res.statusCode < 300) replay.remember(claim.signature, parseAmzDate(claim.amzDate) ?? Date.now());
    } catch (e) {
      if (res.destroyed) return; // the client left: nobody to answer, nothing to report
      const err = toS3Error(e);
      if (err.code === 'InternalError') d.log.error(`S3 ${req.method} ${rawPath}`, e);
      sendError(res, err, rawPath, requestId, req.method === 'HEAD');
    }
  }

  async function route(r: S3Req): Promise<void> {
    const has = (k: string) => r.query.has(k);
    if (r.bucket === '') {
      if (r.method !== 'GET') throw new S3Error('MethodNotAllowed');
      const buckets = await listing.buckets(r.tree);
      const owner = { ID: r.tree.who, DisplayName: r.tree.who };
      return sendXml(r, 'ListAllMyBucketsResult', { Owner: owner, Buckets: { Bucket: buckets.map((b) => ({ Name: b.name, CreationDate: iso(b.created) })) } });
    }
    if (r.key === '') {
      switch (r.method) {
        case 'HEAD':
          await mustHaveBucket(r);
          return void r.res.writeHead(200, { 'x-amz-request-id': r.requestId, 'x-amz-bucket-region': r.claim.scope.split('/')[1] }).end();
        case 'GET':
          if (has('location')) return mustHaveBucket(r).then(() => sendXml(r, 'LocationConstraint', {}));
          if (has('uploads')) return multipart.listUploads(r);
          if (['versioning', 'acl', 'policy', 'lifecycle', 'cors', 'tagging', 'website', 'encryption', 'object-lock'].some(has))
            throw new S3Error('NotImplemented');
          return listObjects(r);
        case 'POST':
          if (has('delete')) return deleteObjects(r);
          throw new S3Error('NotImplemented');
        case 'PUT':
          await mustHaveBucket(r);
          throw new S3Error('BucketAlreadyOwnedByYou', undefined, { BucketName: r.bucket });
        case 'DELETE':
          await mustHaveBucket(r);
          throw new S3Error('BucketNotEmpty');
        default:
          throw new S3Error('MethodNotAllowed');
      }
    }
    switch (r.method) {
      case 'GET':
        return has('uploadId') ? multipart.listParts(r) : getObject(r);
      case 'HEAD':
        return getObject(r);
      case 'PUT':
        return has('uploadId') ? multipart.uploadPart(r) : putObject(r);
      case 'POST':
        if (has('uploads')) return multipart.create(r);
        if (has('uploadId')) return multipart.complete(r);
        throw new S3Error('NotImplemented');
      case 'DELETE':
        return has('uploadId') ? multipart.abort(r) : deleteObject(r);
      default:
        throw new S3Error('MethodNotAllowed');
    }
  }

  /** ListObjectsV2 (`list-type=2`) and ListObjects (v1, as s3cmd uses). */
  async function listObjects(r: S3Req): Promise<void> {
    await mustHaveBucket(r);
    const v2 = r.query.get('list-type') === '2';
    const prefix = r.query.get('prefix') ?? '';
    const delimiter = delimiterOf(r.query.get('delimiter'));
    const max = maxKeys(r.query.get('max-keys'));
    const token = r.query.get('continuation-token');
    const startAfter = r.query.get('start-after') ?? '';
    const after = v2 ? (token ? decodeToken(token) : startAfter) : (r.query.get('marker') ?? '');
    const page = await listing.page(r.tree, { bucket: r.bucket, prefix, delimiter, after, max });
    const url = r.query.get('encoding-type') === 'url';
    const enc = (s: string) => (url ? uriEncode(s, true) : s);
    const common = {
      Name: r.bucket,
      Prefix: enc(prefix),
      Delimiter: delimiter ? enc(delimiter) : undefined,
      MaxKeys: max,
      EncodingType: url ? 'url' : undefined,
      IsTruncated: page.truncated,
    };
    const contents = page.objects.map((o) => ({ Key: enc(o.key), LastModified: iso(o.mtime), ETag: o.etag, Size: o.size, StorageClass: 'STANDARD' }));
    const prefixes = page.prefixes.map((p) => ({ Prefix: enc(p) }));
    if (v2) {
      return sendXml(r, 'ListBucketResult', {
        ...common,
        KeyCount: contents.length + prefixes.length,
        ContinuationToken: token ?? undefined,
        StartAfter: startAfter ? enc(startAfter) : undefined,
        NextContinuationToken: page.truncated && page.last ? encodeToken(page.last) : undefined,
        Contents: contents,
        CommonPrefixes: prefixes,
      });
    }
    return sendXml(r, 'ListBucketResult', {
      ...common,
      Marker: enc(after),
      NextMarker: page.truncated && page.last ? enc(page.last) : undefined,
      Contents: contents,
      CommonPrefixes: prefixes,
    });
  }

  return {
    port,
    url,
    close: () =>
      new Promise<void>((ok) => {
        server.close(() => ok());
        for (const s of sockets) s.destroy();
      }),
  };
}
