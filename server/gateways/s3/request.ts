/**
 * One authenticated S3 request as the operations see it: the bucket and key
 * (decoded), the query, the caller's tree and what is needed to read a
 * signed body; plus the small helpers every operation answers with.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { isAppError } from '../../errors';
import { treePath } from '../paths';
import type { GatewayTree } from '../tree';
import { requestBody, type Body } from './body';
import { S3Error } from './errors';
import type { SignedClaim } from './sigv4';
import { xmlDoc, type XmlNode } from './xml';

export interface S3Req {
  req: IncomingMessage;
  res: ServerResponse;
  method: string;
  bucket: string;
  /** The object key, decoded ('' for bucket requests). */
  key: string;
  query: URLSearchParams;
  tree: GatewayTree;
  claim: SignedClaim;
  signingKey: Buffer;
  requestId: string;
  /** Aborted when the client goes away before the answer. */
  signal: AbortSignal;
}

/** The tree path of `bucket`/`key`; `..`, NUL and backslashes are refused (InvalidObjectName). */
export function objectPath(bucket: string, key: string): string {
  if (key.length > 1024) throw new S3Error('KeyTooLongError');
  if (key.startsWith('/') || key.includes('//')) throw new S3Error('InvalidObjectName', 'Keys with empty path segments are not supported.');
  try {
    return treePath(`/${bucket}/${key}`, { dots: 'refuse' });
  } catch (e) {
    if (isAppError(e)) throw new S3Error('InvalidObjectName', `The key is not valid (${String(e.details?.reason ?? e.code)}).`);
    throw e;
  }
}

/** Checks the bucket exists for this caller: NoSuchBucket otherwise. */
export async function mustHaveBucket(r: S3Req, bucket = r.bucket): Promise<void> {
  if (bucket === '' || bucket.includes('/')) throw new S3Error('InvalidBucketName');
  try {
    await r.tree.stat(objectPath(bucket, ''));
  } catch (e) {
    if (isAppError(e) && e.code === 'not_found') throw new S3Error('NoSuchBucket', undefined, { BucketName: bucket });
    throw e;
  }
}

/** The request's body, decoded and verified as it streams. */
export const bodyOf = (r: S3Req): Body => requestBody(r.req, r.claim, r.signingKey);

/** Reads a small body whole (XML requests), bounded. */
export async function smallBody(r: S3Req, max: number): Promise<string> {
  const body = bodyOf(r);
  if (body.size !== undefined && body.size > max) throw new S3Error('MalformedXML', 'The XML body is too large.');
  const parts: Buffer[] = [];
  let n = 0;
  for await (const chunk of body.stream as Readable) {
    n += (chunk as Buffer).length;
    if (n > max) throw new S3Error('MalformedXML', 'The XML body is too large.');
    parts.push(chunk as Buffer);
  }
  return Buffer.concat(parts).toString('utf8');
}

/** Answers with an XML document. */
export function sendXml(r: S3Req, root: string, body: XmlNode, status = 200): void {
  const text = xmlDoc(root, body);
  r.res.writeHead(status, { 'Content-Type': 'application/xml', 'Content-Length': Buffer.byteLength(text), 'x-amz-request-id': r.requestId });
  r.res.end(text);
}

/** Answers with no body. */
export function sendEmpty(r: S3Req, status: number, headers: Record<string, string | number> = {}): void {
  r.res.writeHead(status, { 'Content-Length': 0, 'x-amz-request-id': r.requestId, ...headers });
  r.res.end();
}

export const iso = (ms: number): string => new Date(Math.round(ms)).toISOString();
