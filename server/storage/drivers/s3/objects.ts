/**
 * Object-level reads shared by the driver and its multipart sessions: HEAD to
 * an Entry, listing pages, and the checks a write makes before it starts.
 */
import { HeadObjectCommand, ListObjectsV2Command, type ListObjectsV2CommandOutput, type _Object } from '@aws-sdk/client-s3';
import { AppError } from '../../../errors';
import { baseName, parentRel } from '../../../lib/paths';
import type { Entry } from '../../types';
import type { S3Api } from './client';
import { bareEtag, type KeyMap } from './keys';

/** S3's own page ceiling; also what one sync request returns. */
export const PAGE_KEYS = 1000;

/** The entry of the object `key` (shown as `rel`). Missing → `not_found`. */
export async function headEntry(api: S3Api, key: string, rel: string, signal?: AbortSignal): Promise<Entry> {
  const h = await api.call(rel, signal, (abortSignal) => api.client.send(new HeadObjectCommand({ Bucket: api.bucket, Key: key }), { abortSignal }));
  return {
    name: baseName(rel),
    type: 'file',
    size: h.ContentLength ?? 0,
    mtime: h.LastModified?.getTime() ?? 0,
    etag: bareEtag(h.ETag),
    mime: h.ContentType,
  };
}

/** The entry of `key`, or null when no such object exists. */
export async function headOrNull(api: S3Api, key: string, rel: string, signal?: AbortSignal): Promise<Entry | null> {
  try {
    return await headEntry(api, key, rel, signal);
  } catch (e) {
    if (e instanceof AppError && e.code === 'not_found') return null;
    throw e;
  }
}

/** An Entry for a listed object. */
export const objectEntry = (name: string, o: _Object): Entry => ({
  name,
  type: 'file',
  size: o.Size ?? 0,
  mtime: o.LastModified?.getTime() ?? 0,
  etag: bareEtag(o.ETag),
});

/**
 * ListObjectsV2 pages below the key prefix `prefix`, 1,000 keys each; folded
 * into common prefixes when `delimiter` is set. One request per page.
 */
export async function* listPages(
  api: S3Api,
  prefix: string,
  rel: string,
  opts: { delimiter?: string; maxKeys?: number; signal?: AbortSignal } = {},
): AsyncGenerator<ListObjectsV2CommandOutput> {
  let token: string | undefined;
  do {
    const page = await api.call(rel, opts.signal, (abortSignal) =>
      api.client.send(
        new ListObjectsV2Command({
          Bucket: api.bucket,
          Prefix: prefix,
          Delimiter: opts.delimiter,
          MaxKeys: opts.maxKeys ?? PAGE_KEYS,
          ContinuationToken: token,
        }),
        { abortSignal },
      ),
    );
    yield page;
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
}

/** Every key below `prefix`, flat, page by page. */
export async function* listKeys(api: S3Api, prefix: string, rel: string, signal?: AbortSignal): AsyncGenerator<_Object> {
  for await (const page of listPages(api, prefix, rel, { signal })) yield* page.Contents ?? [];
}

/** True when at least one key lies below the folder `rel`, i.e. the folder exists. The root always exists. */
export async function folderExists(api: S3Api, keys: KeyMap, rel: string, signal?: AbortSignal): Promise<boolean> {
  if (rel === '') return true;
  for await (const page of listPages(api, keys.folder(rel), rel, { maxKeys: 1, signal })) return (page.KeyCount ?? page.Contents?.length ?? 0) > 0;
  return false;
}

/**
 * What every write checks before it sends bytes, in parallel: the parent
 * folder exists (`not_found`), no folder sits at the path and, when
 * `overwrite` is false, no file does either (`conflict`).
 */
export async function checkWritable(api: S3Api, keys: KeyMap, rel: string, overwrite: boolean, signal?: AbortSignal): Promise<void> {
  const key = keys.file(rel);
  const [parentOk, folderThere, fileThere] = await Promise.all([
    folderExists(api, keys, parentRel(rel), signal),
    folderExists(api, keys, rel, signal),
    overwrite ? Promise.resolve(null) : headOrNull(api, key, rel, signal),
  ]);
  if (!parentOk) throw new AppError('not_found', { path: parentRel(rel) });
  if (folderThere) throw new AppError('conflict', { path: rel, reason: 'a folder has this name' });
  if (fileThere) throw new AppError('conflict', { path: rel });
}
