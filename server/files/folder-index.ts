/**
 * In-memory listing index of one folder in one sort: every entry's JSON,
 * serialised once (by SQLite) into one buffer, with the byte span and the
 * keyset of each row. Any page, in either direction, by offset or by cursor,
 * is then a slice of that buffer: its cost does not grow with the folder or
 * the offset. Before it, a random page of a 10,000-entry folder cost the
 * whole folder (an OFFSET walk, a sort by size or date, a count over every
 * row): 3 ms by name and 15–17 ms by size or date per request, ~26–52
 * listings/s under 200 clients.
 *
 * An index is built on the first page asked of a folder generation (one query
 * of the whole folder: the cold cost, ~23 ms for 10,000 entries; descending
 * order is the ascending index reordered, no query) and lives in a
 * byte-bounded LRU until the folder changes. A folder above MAX_ENTRIES is
 * held in chunks instead: its count, the keyset of every ANCHOR_STEP-th row
 * per order (read a row at a time, the loop let go between them), and chunks
 * of ANCHOR_STEP rows, each read by one SQL page from its anchor when a page
 * first needs it and kept in the same LRU. An offset page is then slices of
 * one or two chunks: a random 1,000-row page of a 100,000-entry folder was an
 * anchor seek and 1,000 entries' JSON built by SQLite on the loop (~7 ms of
 * the main thread each, p99 113 ms at 8 clients; issue 38). Cursor pages of
 * such a folder stay SQL pages (keyset cursors are cheap at any depth).
 */
import type { Db } from '../db';
import type { Level, StorageRef } from '../catalogue';
import { stampThumbs } from './entry';
import type { Keyset, SortField } from './listing.types';
import { PageCache } from './page-cache';
import { FolderIndexRepo, type FolderRow } from './folder-index.repo';
import type { PageQuery } from './listing.repo';

/** Larger folders are paged by SQL (an index of 50,000 entries is ~16 MB and ~100 ms to build). */
export const MAX_ENTRIES = 20_000;
/** A folder above MAX_ENTRIES keeps the keyset of every ANCHOR_STEP-th row and is read in chunks of that many rows. */
const ANCHOR_STEP = 1000;
/** Byte budget of all indexes together (LRU beyond it). */
const BUDGET_BYTES = 64 << 20;
/** A big folder is read whole in the background up to this size (~300 bytes an entry: under half the budget). */
const WARM_MAX_ENTRIES = 100_000;

/** One folder in one order (folders first, then the sort value, natural name, id; all reversed for descending). */
export interface FolderIndex {
  /** Entries' JSON, back to back. */
  body: Buffer;
  /** Byte offset of entry i in `body`; `starts[n]` is the end. */
  starts: Uint32Array;
  /** Rows that are folders (they come first). */
  dirs: number;
  ids: Float64Array;
  values: Float64Array;
  keys: string[];
  bytes: number;
}

export interface IndexedPage {
  /** JSON array text of the page's entries, in pieces (slices of the index, sent without a copy). */
  entries: Buffer[];
  total: number;
  /** The keyset of the page's last row when more rows follow, else null. */
  next: Keyset | null;
}

/** Where an SQL page (a cursor page of a folder above MAX_ENTRIES) starts: `offset` rows behind `after`; the folder's count. */
export interface PageSeek {
  total: number;
  after?: Keyset;
  offset: number;
}

/** A folder above MAX_ENTRIES: its count and, once asked, its anchors (ANCHOR_STEP) in one order. */
interface BigFolder {
  tooBig: true;
  total: number;
  anchors?: Keyset[];
  bytes: number;
}

/** `limit` rows of a folder in one order from `after` (from its start without): an SQL page's rows (ListingRepo.rows). */
export type RowReader = (q: Omit<PageQuery, 'total'>) => Promise<FolderRow[]>;

export class FolderIndexes {
  private cache = new PageCache<FolderIndex | BigFolder>(BUDGET_BYTES);
  private repo: FolderIndexRepo;
  /** Anchors and chunks being read, by key and generation: concurrent pages wait for one read. */
  private reading = new Map<string, Promise<unknown>>();

  /** `locked(storage)`: whether the storage may hold app locks (its indexes then join them); `rows` reads a big folder's chunks. */
  constructor(
    db: Db,
    private locked: (storageId: number) => boolean,
    private rows: RowReader,
  ) {
    this.repo = new FolderIndexRepo(db);
  }

  /** Feeds the cache: call for every change of a folder (structural: removals and moves, which touch subtrees). */
  changed(storageId: number, folder: string, structural: boolean): void {
    this.cache.changed(storageId, folder, structural);
  }

  /** Forgets every index (changes made through another instance may have been missed). */
  clear(): void {
    this.cache.clear();
  }

  /**
   * A page of the folder from its index, building the index (a big folder's chunks) when the folder
   * changed since; where to start an SQL page for a cursor page of a folder too big to index; null when
   * `after` names a row the index does not hold. `stampEpoch` is part of the key: signed thumbnail URLs
   * inside the JSON are renewed with it.
   */
  async page(q: Omit<PageQuery, 'total'> & { stamp?: (id: number) => string; stampEpoch: number }): Promise<IndexedPage | PageSeek | null> {
    const key = `${q.storageId}\u0000${q.dir}\u0000${q.sort}\u0000${q.perm}\u0000${q.stampEpoch}`;
    // The generation the index is of: a change landing while it is read leaves it stale, never served.
    const gen = this.cache.stampOf(q.storageId, q.dir);
    let ix = this.cache.get(q.storageId, q.dir, key);
    if (!ix) {
      ix = await this.build({ id: q.storageId, tenant_id: q.tenantId }, q.dir, q.sort, q.perm, q.stamp);
      this.cache.set(q.storageId, q.dir, key, ix, gen);
    }
    if ('tooBig' in ix) return q.after ? { total: ix.total, after: q.after, offset: 0 } : this.chunked(ix, q, key + (q.desc ? '\u0000desc' : ''), gen);
    if (q.desc) {
      // Descending is its own index (the ascending one reordered, no query): every page stays one slice.
      const asc = ix;
      ix = this.cache.get(q.storageId, q.dir, key + '\u0000desc') as FolderIndex | undefined;
      if (!ix) this.cache.set(q.storageId, q.dir, key + '\u0000desc', (ix = descending(asc)), gen);
    }
    const n = ix.ids.length;
    let from = q.offset;
    if (q.after) {
      from = ix.ids.indexOf(q.after.id) + 1;
      if (from === 0) return null;
    }
    const to = Math.max(from, Math.min(n, from + q.limit));
    const last = to > from && to < n ? to - 1 : -1;
    return {
      // Each entry carries its trailing comma in the index; the page's last one is cut.
      entries: [OPEN, from < to ? ix.body.subarray(ix.starts[from], ix.starts[to] - 1) : EMPTY, CLOSE],
      total: n,
      next: last < 0 ? null : keysetOf(ix, last),
    };
  }

  /**
   * An offset page of a folder too big to index: slices of the chunks it spans. A chunk shorter than
   * ANCHOR_STEP (the folder lost rows since it was counted: a removal's change note can trail its commit)
   * ends the page.
   */
  private async chunked(big: BigFolder, q: PageOf & { offset: number; limit: number }, order: string, gen: string): Promise<IndexedPage> {
    // The anchors, then the chunks, are read in the background from the order's first page on: cold, the
    // first random pages each waited for the anchors' ~100 statements and one or two chunks' SQL, every
    // other page behind them (a 100,000-entry folder's first random pages: p99 ~500 ms at 8 clients).
    if (!this.reading.has(`${order}\u0000warm\u0000${gen}`))
      this.once(`${order}\u0000warm\u0000${gen}`, () => this.warm(big, q, order, gen)).catch(() => undefined);
    const end = Math.min(big.total, q.offset + q.limit);
    const pieces: Buffer[] = [];
    let next: Keyset | null = null;
    for (let at = q.offset; at < end; ) {
      const k = Math.floor(at / ANCHOR_STEP);
      const chunk = await this.chunk(big, q, order, gen, k);
      const n = chunk.ids.length;
      const from = at - k * ANCHOR_STEP;
      if (from >= n) break;
      const to = Math.min(n, end - k * ANCHOR_STEP);
      pieces.push(chunk.body.subarray(chunk.starts[from], chunk.starts[to]));
      at = k * ANCHOR_STEP + to;
      const more = to < n || (n === ANCHOR_STEP && at < big.total);
      next = more ? keysetOf(chunk, to - 1) : null;
      if (n < ANCHOR_STEP) break;
    }
    // Each entry carries its trailing comma in a chunk; the page's last one is cut.
    if (pieces.length) pieces.push(pieces.pop()!.subarray(0, -1));
    return { entries: [OPEN, ...pieces, CLOSE], total: big.total, next };
  }

  /** Chunk `k` of a big folder in one order (rows k × ANCHOR_STEP onwards), read from its anchor when not held. */
  private chunk(big: BigFolder, q: PageOf, order: string, gen: string, k: number): Promise<FolderIndex> {
    const key = `${order}\u0000chunk${k}`;
    const hit = this.cache.get(q.storageId, q.dir, key) as FolderIndex | undefined;
    if (hit) return Promise.resolve(hit);
    return this.once(`${key}\u0000${gen}`, async () => {
      const anchors = k ? await this.anchors(big, q, order, gen) : [];
      if (anchors.length < k) return indexOf([]);
      const rows = await this.rows({ ...q, limit: ANCHOR_STEP, offset: 0, after: anchors[k - 1] });
      const chunk = indexOf(rows, q.stamp);
      this.cache.set(q.storageId, q.dir, key, chunk, gen);
      return chunk;
    });
  }

  /** The keyset of every ANCHOR_STEP-th row of a big folder in one order (read once per generation). */
  private anchors(big: BigFolder, q: PageOf, order: string, gen: string): Promise<Keyset[]> {
    const key = `${order}\u0000anchors`;
    const hit = (this.cache.get(q.storageId, q.dir, key) as BigFolder | undefined)?.anchors;
    if (hit) return Promise.resolve(hit);
    return this.once(`${key}\u0000${gen}`, async () => {
      const anchors = await this.repo.anchors({ id: q.storageId, tenant_id: q.tenantId }, q.dir, q.sort, q.desc, ANCHOR_STEP);
      this.cache.set(q.storageId, q.dir, key, { ...big, anchors, bytes: 64 + anchors.length * 64 }, gen);
      return anchors;
    });
  }

  /**
   * Reads a big folder's anchors and, up to WARM_MAX_ENTRIES, every chunk,
   * one statement at a time with the loop let go between them; stops once the folder changed.
   */
  private async warm(big: BigFolder, q: PageOf, order: string, gen: string): Promise<void> {
    await this.anchors(big, q, order, gen);
    if (big.total > WARM_MAX_ENTRIES) return;
    for (let k = 0; k * ANCHOR_STEP < big.total && this.cache.stampOf(q.storageId, q.dir) === gen; k++) {
      await this.chunk(big, q, order, gen, k);
      await new Promise((r) => setImmediate(r));
    }
  }

  /** `read()`, or the one already under way for `key`. */
  private once<T>(key: string, read: () => Promise<T>): Promise<T> {
    let p = this.reading.get(key) as Promise<T> | undefined;
    if (!p) {
      p = read().finally(() => this.reading.delete(key));
      this.reading.set(key, p);
    }
    return p;
  }

  private async build(s: StorageRef, dir: string, sort: SortField, perm: Level, stamp?: (id: number) => string): Promise<FolderIndex | BigFolder> {
    const total = await this.repo.size(s, dir);
    if (total > MAX_ENTRIES) return { tooBig: true, total, bytes: 64 };
    return indexOf(await this.repo.rows(s, dir, sort, this.locked(s.id), perm), stamp);
  }
}

/** What a page asks of a folder's index. */
type PageOf = Pick<PageQuery, 'storageId' | 'tenantId' | 'dir' | 'sort' | 'desc' | 'perm'> & { stamp?: (id: number) => string };

/** The keyset of row `i` of an index. */
const keysetOf = (ix: FolderIndex, i: number): Keyset => ({ type: i < ix.dirs ? 'dir' : 'file', value: ix.values[i], key: ix.keys[i], id: ix.ids[i] });

/** An index of `rows` (in one order), their thumbnail URLs signed by `stamp`. */
function indexOf(rows: FolderRow[], stamp?: (id: number) => string): FolderIndex {
  const n = rows.length;
  const texts = rows.map((r) => Buffer.from(stampThumbs(r[0], stamp)));
  const starts = new Uint32Array(n + 1);
  let at = 0;
  for (let i = 0; i < n; i++) {
    starts[i] = at;
    at += texts[i].length + 1; // a comma after each entry: an ascending page is then one slice
  }
  starts[n] = at;
  const body = Buffer.allocUnsafeSlow(at);
  for (let i = 0; i < n; i++) {
    texts[i].copy(body, starts[i]);
    body[starts[i + 1] - 1] = 0x2c;
  }
  let dirs = 0;
  while (dirs < n && rows[dirs][1] === 'dir') dirs++;
  const keys = rows.map((r) => r[3]);
  const bytes = at + n * 24 + keys.reduce((a, k) => a + 2 * k.length + 16, 0);
  return { body, starts, dirs, ids: Float64Array.from(rows, (r) => r[4]), values: Float64Array.from(rows, (r) => r[2]), keys, bytes };
}

const OPEN = Buffer.from('[');
const CLOSE = Buffer.from(']');
const EMPTY = Buffer.alloc(0);

/**
 * The descending order of an ascending index: folders still first, each
 * group reversed (the SQL order is `type, value DESC, sort_key DESC, id DESC`).
 */
function descending(asc: FolderIndex): FolderIndex {
  const n = asc.ids.length;
  const order = Array.from({ length: n }, (_, i) => (i < asc.dirs ? asc.dirs - 1 - i : n - 1 - (i - asc.dirs)));
  const body = Buffer.allocUnsafeSlow(asc.body.length);
  const starts = new Uint32Array(n + 1);
  let at = 0;
  order.forEach((p, i) => {
    starts[i] = at;
    at += asc.body.copy(body, at, asc.starts[p], asc.starts[p + 1]);
  });
  starts[n] = at;
  return {
    body,
    starts,
    dirs: asc.dirs,
    ids: Float64Array.from(order, (p) => asc.ids[p]),
    values: Float64Array.from(order, (p) => asc.values[p]),
    keys: order.map((p) => asc.keys[p]),
    bytes: asc.bytes,
  };
}
