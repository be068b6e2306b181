/**
 * Multipart uploads, staged in the data folder (`staging/s3/<upload id>/`):
 * each part is written to a temp file and renamed into place (its MD5 in its
 * name) once its body is complete and verified, so a part is either whole or
 * absent, and its bytes and ETag never disagree. Complete
 * streams the parts in order through the caller's tree (one atomic write
 * through the write gate: nothing is visible before, one announcement after)
 * and removes the staging. Uploads belong to whoever created them; uploads
 * older than MAX_AGE_MS are swept at start and whenever one is created (no
 * timer). The object's ETag is S3's: MD5 of the parts' MD5s, `-<count>`.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { S3Error } from './errors';
import { ensureParent } from './objects';
import { bodyOf, iso, mustHaveBucket, objectPath, sendEmpty, sendXml, smallBody, type S3Req } from './request';
import { childrenNamed, childText, MAX_XML_BYTES, parseXml } from './xml';

const MAX_AGE_MS = 24 * 3_600_000;
const MIN_PART = 5 * 1024 * 1024;
const MAX_PART = 5 * 1024 ** 3;
const MAX_PARTS = 10_000;

interface UploadMeta {
  bucket: string;
  key: string;
  owner: string;
  created: number;
}

interface PartInfo {
  number: number;
  size: number;
  md5: string;
  mtime: number;
  /** Its file in the upload's staging folder. */
  file: string;
}

export class Multipart {
  constructor(private root: string) {}

  /** Removes uploads older than a day (and any unreadable staging). */
  async sweep(now = Date.now()): Promise<void> {
    await mkdir(this.root, { recursive: true });
    for (const id of await readdir(this.root)) {
      const meta = await this.meta(id).catch(() => null);
      if (!meta || now - meta.created > MAX_AGE_MS) await rm(join(this.root, id), { recursive: true, force: true });
    }
  }

  async create(r: S3Req): Promise<void> {
    await mustHaveBucket(r);
    const path = objectPath(r.bucket, r.key);
    if (r.key.endsWith('/')) throw new S3Error('InvalidObjectName', 'A folder is not uploaded in parts.');
    r.tree.files.target(path, 'editor'); // refuse now, not after the parts
    await this.sweep();
    const id = randomBytes(18).toString('base64url');
    await mkdir(join(this.root, id), { recursive: true });
    const meta: UploadMeta = { bucket: r.bucket, key: r.key, owner: r.tree.who, created: Date.now() };
    await writeFile(join(this.root, id, 'upload.json'), JSON.stringify(meta));
    sendXml(r, 'InitiateMultipartUploadResult', { Bucket: r.bucket, Key: r.key, UploadId: id });
  }

  async uploadPart(r: S3Req): Promise<void> {
    const id = await this.mine(r);
    const n = Number(r.query.get('partNumber'));
    if (!Number.isInteger(n) || n < 1 || n > MAX_PARTS) throw new S3Error('InvalidArgument', 'Part number must be an integer between 1 and 10000.');
    if (r.req.headers['x-amz-copy-source'] !== undefined) throw new S3Error('NotImplemented', 'UploadPartCopy is not supported.');
    const body = bodyOf(r);
    if (body.size === undefined) throw new S3Error('MissingContentLength');
    if (body.size > MAX_PART) throw new S3Error('EntityTooLarge');
    const dir = join(this.root, id);
    const tmp = join(dir, `${n}.${randomBytes(6).toString('hex')}.tmp`);
    try {
      await pipeline(body.stream, createWriteStream(tmp));
    } catch (e) {
      await rm(tmp, { force: true });
      throw e;
    }
    // The part's MD5 is in its name, so bytes and ETag are published by one rename; a part sent again replaces it.
    const name = `${n}.${body.md5()}.part`;
    await rename(tmp, join(dir, name));
    for (const f of await readdir(dir)) if (f.startsWith(`${n}.`) && f.endsWith('.part') && f !== name) await rm(join(dir, f), { force: true });
    sendEmpty(r, 200, { ETag: `"${body.md5()}"` });
  }

  async complete(r: S3Req): Promise<void> {
    const id = await this.mine(r);
    const doc = parseXml(await smallBody(r, MAX_XML_BYTES));
    if (!doc || doc.name !== 'CompleteMultipartUpload') throw new S3Error('MalformedXML');
    const wanted = childrenNamed(doc, 'Part').map((p) => ({
      number: Number(childText(p, 'PartNumber')),
      etag: (childText(p, 'ETag') ?? '').replace(/"/g, ''),
    }));
    if (wanted.length === 0) throw new S3Error('MalformedXML', 'At least one part is needed.');
    const have = new Map((await this.parts(id)).map((p) => [p.number, p]));
    const parts: PartInfo[] = [];
    for (const [i, w] of wanted.entries()) {
      if (i > 0 && w.number <= wanted[i - 1].number) throw new S3Error('InvalidPartOrder');
      const p = have.get(w.number);
      if (!p || p.md5 !== w.etag) throw new S3Error('InvalidPart', undefined, { PartNumber: String(w.number) });
      if (i < wanted.length - 1 && p.size < MIN_PART) throw new S3Error('EntityTooSmall', undefined, { PartNumber: String(w.number) });
      parts.push(p);
    }
    const path = objectPath(r.bucket, r.key);
    const dir = join(this.root, id);
    await ensureParent(r, path);
    const size = parts.reduce((s, p) => s + p.size, 0);
    await r.tree.write(path, Readable.from(concat(dir, parts)), { size, overwrite: true, signal: r.signal });
    await rm(dir, { recursive: true, force: true });
    const etag = `"${createHash('md5')
      .update(Buffer.concat(parts.map((p) => Buffer.from(p.md5, 'hex'))))
      .digest('hex')}-${parts.length}"`;
    sendXml(r, 'CompleteMultipartUploadResult', { Location: `/${r.bucket}/${r.key}`, Bucket: r.bucket, Key: r.key, ETag: etag });
  }

  async abort(r: S3Req): Promise<void> {
    const id = await this.mine(r);
    await rm(join(this.root, id), { recursive: true, force: true });
    sendEmpty(r, 204);
  }

  async listParts(r: S3Req): Promise<void> {
    const id = await this.mine(r);
    const after = Number(r.query.get('part-number-marker') ?? 0) || 0;
    const max = Math.min(Number(r.query.get('max-parts') ?? 1000) || 1000, 1000);
    const all = (await this.parts(id)).filter((p) => p.number > after);
    const page = all.slice(0, max);
    sendXml(r, 'ListPartsResult', {
      Bucket: r.bucket,
      Key: r.key,
      UploadId: id,
      PartNumberMarker: after,
      NextPartNumberMarker: page.at(-1)?.number ?? after,
      MaxParts: max,
      IsTruncated: all.length > max,
      StorageClass: 'STANDARD',
      Part: page.map((p) => ({ PartNumber: p.number, LastModified: iso(p.mtime), ETag: `"${p.md5}"`, Size: p.size })),
    });
  }

  async listUploads(r: S3Req): Promise<void> {
    await mustHaveBucket(r);
    const prefix = r.query.get('prefix') ?? '';
    const uploads: Array<{ Key: string; UploadId: string; Initiated: string; StorageClass: string }> = [];
    for (const id of await readdir(this.root).catch(() => [] as string[])) {
      const m = await this.meta(id).catch(() => null);
      if (m && m.bucket === r.bucket && m.owner === r.tree.who && m.key.startsWith(prefix))
        uploads.push({ Key: m.key, UploadId: id, Initiated: iso(m.created), StorageClass: 'STANDARD' });
    }
    uploads.sort((a, b) => (a.Key < b.Key ? -1 : a.Key > b.Key ? 1 : a.Initiated < b.Initiated ? -1 : 1));
    sendXml(r, 'ListMultipartUploadsResult', { Bucket: r.bucket, Prefix: prefix, MaxUploads: 1000, IsTruncated: false, Upload: uploads });
  }

  /** The upload id of the request when it exists and belongs to this caller for this key; NoSuchUpload otherwise. */
  private async mine(r: S3Req): Promise<string> {
    const id = r.query.get('uploadId') ?? '';
    const m = /^[\w-]{1,64}$/.test(id) ? await this.meta(id).catch(() => null) : null;
    if (!m || m.bucket !== r.bucket || m.key !== r.key || m.owner !== r.tree.who) throw new S3Error('NoSuchUpload', undefined, { UploadId: id });
    return id;
  }

  private async meta(id: string): Promise<UploadMeta> {
    return JSON.parse(await readFile(join(this.root, id, 'upload.json'), 'utf8')) as UploadMeta;
  }

  /** The uploaded parts in order (the newest copy of a part sent twice at once). */
  private async parts(id: string): Promise<PartInfo[]> {
    const dir = join(this.root, id);
    const byNumber = new Map<number, PartInfo>();
    for (const f of await readdir(dir)) {
      const m = /^(\d+)\.([0-9a-f]{32})\.part$/.exec(f);
      if (!m) continue;
      const st = await stat(join(dir, f));
      const p = { number: Number(m[1]), md5: m[2], size: st.size, mtime: st.mtimeMs, file: f };
      const seen = byNumber.get(p.number);
      if (!seen || seen.mtime < p.mtime) byNumber.set(p.number, p);
    }
    return [...byNumber.values()].sort((a, b) => a.number - b.number);
  }
}

/** The parts' bytes one after the other. */
async function* concat(dir: string, parts: PartInfo[]): AsyncGenerator<Buffer> {
  for (const p of parts) for await (const chunk of createReadStream(join(dir, p.file))) yield chunk as Buffer;
}
