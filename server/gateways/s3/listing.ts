/**
 * ListBuckets and ListObjects (v1 and v2) from the catalogue, in S3's order
 * (keys by UTF-8 bytes, which is SQLite's BINARY order). A folder's key is
 * its path and `/`: with the delimiter `/` folders are common prefixes; in a
 * recursive listing (no delimiter) files are listed and empty folders show as
 * `key/` markers (a folder with content is implied by its keys). A key
 * confined to a root sees only the way down to it and what is below it.
 * The queries are in listing.repo.ts.
 */
import type { Db } from '../../db';
import { isAppError } from '../../errors';
import { etagOf, type Target } from '../../files';
import type { GatewayTree } from '../tree';
import { S3Error } from './errors';
import { S3ListingRepo, type KeyRow as Row } from './listing.repo';

export interface ListQuery {
  bucket: string;
  prefix: string;
  /** '' (recursive) or '/'. */
  delimiter: string;
  /** List keys after this one (exclusive). */
  after: string;
  max: number;
}

export interface ListedObject {
  key: string;
  size: number;
  mtime: number;
  etag: string;
}

export interface ListPage {
  objects: ListedObject[];
  prefixes: string[];
  truncated: boolean;
  /** The last key or prefix of the page (where the next one starts). */
  last: string | null;
}

/** U+10FFFF sorts after every character in UTF-8 bytes: `p + TOP` bounds the keys that start with `p`. */
const TOP = '\u{10ffff}';

export class S3Listing {
  private repo: S3ListingRepo;

  constructor(db: Db) {
    this.repo = new S3ListingRepo(db);
  }

  /** The buckets: the storages the actor can open, by name. */
  async buckets(tree: GatewayTree): Promise<Array<{ name: string; created: number }>> {
    const out: Array<{ name: string; created: number }> = [];
    for await (const e of tree.list('/')) out.push({ name: e.name, created: e.mtime });
    return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** One page of keys; a prefix naming no folder gives an empty page. */
  async page(tree: GatewayTree, q: ListQuery): Promise<ListPage> {
    const cut = q.prefix.lastIndexOf('/') + 1;
    const dirKey = q.prefix.slice(0, cut);
    if (dirKey.includes('//') || dirKey.startsWith('/')) return empty();
    const folder = await this.folder(tree, `/${q.bucket}/${dirKey}`);
    if (!folder) return empty();
    const rows = q.delimiter === '/' ? await this.delimited(folder, dirKey, q) : await this.recursive(tree, folder, q);
    const page: ListPage = { objects: [], prefixes: [], truncated: rows.length > q.max, last: null };
    for (const r of rows.slice(0, q.max)) {
      if (r.type === 'dir' && q.delimiter === '/') page.prefixes.push(r.k);
      else
        page.objects.push({
          key: r.k,
          size: r.type === 'dir' ? 0 : r.size,
          mtime: r.mtime,
          etag: r.type === 'dir' ? EMPTY_ETAG : etagOf(r.size, r.mtime, r.etag),
        });
      page.last = r.k;
    }
    return page;
  }

  /** The children of one folder whose key starts with the prefix, as full keys. */
  private async delimited(t: Target, dirKey: string, q: ListQuery): Promise<Row[]> {
    const partial = q.prefix.slice(dirKey.length);
    let after = '';
    if (q.after.startsWith(dirKey)) after = q.after.slice(dirKey.length);
    else if (q.after > dirKey) return [];
    let rows: Row[];
    if (t.passage !== undefined) {
      // Exactly `name` (only a NUL could sort between the bounds, and PostgreSQL text cannot hold one).
      const name = t.passage + '/';
      const there = name > after && name.startsWith(partial) && (await this.repo.children(t.storage, t.rel, '', name, name + '\u0001', 1)).length > 0;
      rows = there ? [{ k: name, type: 'dir', size: 0, mtime: 0, etag: null }] : [];
    } else {
      rows = await this.repo.children(t.storage, t.rel, after, partial, partial + TOP, q.max + 1);
    }
    return rows.map((r) => ({ ...r, k: dirKey + r.k }));
  }

  /** Every file and empty folder below the prefix (within the actor's reach), in key order. */
  private async recursive(tree: GatewayTree, folder: Target, q: ListQuery): Promise<Row[]> {
    let t = folder;
    // Down the way to a key's root: the listing narrows to it, or is empty when the prefix leads elsewhere.
    while (t.passage !== undefined) {
      const base = (t.rel ? `${t.rel}/` : '') + t.passage + '/';
      if (!base.startsWith(q.prefix) && !q.prefix.startsWith(base)) return [];
      t = tree.files.target(`/${q.bucket}/${base}`, 'viewer', { passage: true });
    }
    const lo = q.prefix.endsWith('/') ? q.prefix.slice(0, -1) : q.prefix;
    return this.repo.subtree({
      sid: t.storage.id,
      tid: t.storage.tenant_id,
      lo,
      hi: q.prefix + TOP,
      base: t.rel,
      after: q.after,
      prefix: q.prefix,
      top: TOP,
      limit: q.max + 1,
    });
  }

  /** The folder a listing starts from (access checked, revalidated like every listing), or null when there is none. */
  private async folder(tree: GatewayTree, path: string): Promise<Target | null> {
    const first = tree.files.entries(path, 1);
    try {
      await first.next();
    } catch (e) {
      if (isAppError(e) && e.code === 'not_found') return null;
      throw e;
    } finally {
      await first.return(undefined);
    }
    return tree.files.target(path, 'viewer', { passage: true });
  }
}

/** The ETag of an empty object (MD5 of nothing): what a folder marker answers. */
export const EMPTY_ETAG = '"d41d8cd98f00b204e9800998ecf8427e"';

const empty = (): ListPage => ({ objects: [], prefixes: [], truncated: false, last: null });

/** The continuation token of a page: the last key, opaque to clients. */
export const encodeToken = (key: string): string => Buffer.from(key, 'utf8').toString('base64url');

export function decodeToken(token: string): string {
  const key = Buffer.from(token, 'base64url').toString('utf8');
  if (encodeToken(key) !== token) throw new S3Error('InvalidArgument', 'The continuation token provided is incorrect.');
  return key;
}

/** Reads max-keys (default and ceiling 1000). */
export function maxKeys(raw: string | null): number {
  if (raw === null || raw === '') return 1000;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new S3Error('InvalidArgument', 'max-keys must be a non-negative integer.');
  return Math.min(n, 1000);
}

/** Checks the delimiter: none or `/` (the tree's separator). */
export function delimiterOf(raw: string | null): string {
  const d = raw ?? '';
  if (d !== '' && d !== '/') throw new S3Error('NotImplemented', 'Only the delimiter "/" is supported.');
  return d;
}
