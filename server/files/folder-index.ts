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
 * byte-bounded LRU until the folder changes. Folders above MAX_ENTRIES
 * keep the per-page queries (keyset cursors make those cheap at any depth);
 * for them the cache keeps the count and a keyset every ANCHOR_STEP rows per
 * order, so an offset page seeks near its start instead of stepping over
 * `offset` rows, and no page counts the folder again (issue 38: a random page
 * of a 100,000-entry folder cost a count and an offset walk, p99 659 ms at 8
 * clients).
 */
import type { Db } from '../db';
import type { Level, StorageRef } from '../catalogue';
import { stampThumbs } from './entry';
import type { Keyset, SortField } from './listing.types';
import { PageCache } from './page-cache';
import { FolderIndexRepo } from './folder-index.repo';

/** Larger folders are paged by SQL (an index of 50,000 entries is ~16 MB and ~100 ms to build). */
export const MAX_ENTRIES = 20_000;
/** A folder above MAX_ENTRIES keeps the keyset of every ANCHOR_STEP-th row (a page then steps over fewer rows than that). */
const ANCHOR_STEP = 1000;
/** Byte budget of all indexes together (LRU beyond it). */
const BUDGET_BYTES = 64 << 20;

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

/** Where an SQL page of a folder above MAX_ENTRIES starts: `offset` rows behind `after` (from its start without); the folder's count. */
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

export class FolderIndexes {
  private cache = new PageCache<FolderIndex | BigFolder>(BUDGET_BYTES);
  private repo: FolderIndexRepo;

  /** `locked(storage)`: whether the storage may hold app locks (its indexes then join them). */
  constructor(
    db: Db,
    private locked: (storageId: number) => boolean = () => false,
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
   * A page of the folder from its index, building the index when the folder
   * changed since; where to start an SQL page when the folder is too big to
   * index; null when `after` names a row the index does not hold. `stampEpoch`
   * is part of the key: signed thumbnail URLs inside the JSON are renewed with it.
   */
  async page(q: {
    storageId: number;
    /** The storage's tenant (its rows carry it). */
    tenantId: number;
    dir: string;
    sort: SortField;
    desc: boolean;
    limit: number;
    offset: number;
    after?: Keyset;
    perm: Level;
    stamp?: (id: number) => string;
    stampEpoch: number;
  }): Promise<IndexedPage | PageSeek | null> {
    const key = `${q.storageId}\u0000${q.dir}\u0000${q.sort}\u0000${q.perm}\u0000${q.stampEpoch}`;
    // The generation the index is of: a change landing while it is read leaves it stale, never served.
    const gen = this.cache.stampOf(q.storageId, q.dir);
    let ix = this.cache.get(q.storageId, q.dir, key);
    if (!ix) {
      ix = await this.build({ id: q.storageId, tenant_id: q.tenantId }, q.dir, q.sort, q.perm, q.stamp);
      this.cache.set(q.storageId, q.dir, key, ix, gen);
    }
    if ('tooBig' in ix) return this.seek(ix, q, key, gen);
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
      next: last < 0 ? null : { type: last < ix.dirs ? 'dir' : 'file', value: ix.values[last], key: ix.keys[last], id: ix.ids[last] },
    };
  }

  /** Where the page of a folder too big to index starts (a cursor's own keyset, else the anchor before `offset`). */
  private async seek(
    big: BigFolder,
    q: { storageId: number; tenantId: number; dir: string; sort: SortField; desc: boolean; offset: number; after?: Keyset },
    key: string,
    gen: string,
  ): Promise<PageSeek> {
    if (q.after) return { total: big.total, after: q.after, offset: 0 };
    const k = Math.min(Math.floor(q.offset / ANCHOR_STEP), Math.floor(big.total / ANCHOR_STEP));
    if (k === 0) return { total: big.total, offset: q.offset };
    const order = key + (q.desc ? '\u0000desc' : '');
    let anchors = (this.cache.get(q.storageId, q.dir, order + '\u0000anchors') as BigFolder | undefined)?.anchors;
    if (!anchors) {
      anchors = await this.repo.anchors({ id: q.storageId, tenant_id: q.tenantId }, q.dir, q.sort, q.desc, ANCHOR_STEP);
      this.cache.set(q.storageId, q.dir, order + '\u0000anchors', { ...big, anchors, bytes: 64 + anchors.length * 64 }, gen);
    }
    // The folder may have lost rows since it was counted (the count and anchors are of one generation, but a
    // removal's change note can trail its commit): seek from the last anchor there is.
    const at = Math.min(k, anchors.length);
    return at === 0 ? { total: big.total, offset: q.offset } : { total: big.total, after: anchors[at - 1], offset: q.offset - at * ANCHOR_STEP };
  }

  private async build(s: StorageRef, dir: string, sort: SortField, perm: Level, stamp?: (id: number) => string): Promise<FolderIndex | BigFolder> {
    const total = await this.repo.size(s, dir);
    if (total > MAX_ENTRIES) return { tooBig: true, total, bytes: 64 };
    const rows = await this.repo.rows(s, dir, sort, this.locked(s.id), perm);
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
