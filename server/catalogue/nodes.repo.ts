/**
 * The `nodes` table (the cached tree) and its search index. Every statement
 * is small; bulk changes come in batches inside the caller's one short unit of work.
 */
import type { Db, TenantScope } from '../db';
import { AppError } from '../errors';
import type { Tx } from '../db/async';
import type { NodesTable } from '../db/tables';
import type { Entry } from '../storage';
import { baseName, parentRel } from '../lib/paths';
import { sortKey } from './natural';
import { mimeOf, isText } from './mime';
import type { StorageRef } from './storage-ref';

export type NodeRow = Omit<NodesTable, 'id'> & { id: number };
export type SortField = 'name' | 'size' | 'modified';

export interface ListOptions {
  sort: SortField;
  desc: boolean;
  limit: number;
  offset: number;
  /** Keyset cursor (name sort only): resume after this (type, sort_key, id). */
  after?: { type: string; key: string; id: number };
}

/**
 * A node and everything below it, as one range of the `nodes_path` index: [path, path + '0') holds the
 * node, its subtree ('/' < '0' in code order) and the few siblings that extend its name with a character
 * before '/' ("a.txt" next to "a"), which the last term drops; '' is the whole storage. (`path = ? OR path in range` would make
 * SQLite walk the whole storage.) Parameters: `subtree(storage, path)`, whose first is the storage's tenant: a
 * statement names it before the range (`tenant_id = ? AND ${SUBTREE}`), read from the rows `nodes_path` finds
 * (docs/tenants.md, "The nodes"); `t` qualifies the columns ("n.").
 */
export const subtreeWhere = (t = '') => `${t}storage_id = ? AND ${t}path >= ? AND ${t}path < ? AND (${t}path = ? OR ${t}path >= ?)`;
export const SUBTREE = subtreeWhere();
export const subtree = (s: StorageRef, path: string) =>
  // '' is the whole storage: every path sorts below U+10FFFF.
  (path === '' ? [s.tenant_id, s.id, '', '\u{10FFFF}', '', ''] : [s.tenant_id, s.id, path, path + '0', path, path + '/']) as [
    number,
    number,
    string,
    string,
    string,
    string,
  ];

const ORDER: Record<SortField, string> = {
  name: 'type {d}, sort_key {d}, id {d}',
  size: 'type, size {d}, sort_key, id',
  modified: 'type, mtime {d}, sort_key, id',
};

/**
 * How long a removal is remembered (`node_removals`): a sync that listed a folder before the write gate
 * removed (or moved away) a path in it must not put the rows back after it. A listing is seconds old.
 */
const REMOVALS_MS = 10 * 60_000;
/** How often one repository prunes the removals older than REMOVALS_MS. */
const PRUNE_EVERY_MS = 60_000;

// Every statement names the storage's tenant (docs/tenants.md): a row carries its storage's, and an upsert's
// conflict branch changes only a row of the same tenant.
const Q = {
  noteRemoval:
    'INSERT INTO node_removals (tenant_id, storage_id, path, removed_at) VALUES (?, ?, ?, ?) ON CONFLICT (storage_id, path) DO UPDATE SET removed_at = excluded.removed_at WHERE node_removals.tenant_id = excluded.tenant_id',
  // Removals are kept minutes whatever their tenant: one sweep over them all.
  pruneRemovals: 'DELETE FROM node_removals /* every tenant */ WHERE removed_at < ?',
  removalsSince: 'SELECT path FROM node_removals WHERE tenant_id = ? AND storage_id = ? AND removed_at >= ?',
  anyRemovalSince: 'SELECT 1 FROM node_removals WHERE tenant_id = ? AND storage_id = ? AND removed_at >= ? LIMIT 1',
  // A sync's delete pass, set-based: files have no subtree; rows written since the pass's run began are spared.
  deleteFilesSqlite: `DELETE FROM nodes WHERE tenant_id = ? AND storage_id = ? AND type = 'file' AND (updated_at IS NULL OR updated_at < ?) AND id IN (${Array(500).fill('?').join(',')}) RETURNING id, path`,
  ftsDeleteSqlite: `DELETE FROM search_fts WHERE rowid IN (${Array(500).fill('?').join(',')})`,
  deleteFilesPg: `DELETE FROM nodes WHERE tenant_id = ? AND storage_id = ? AND type = 'file' AND (updated_at IS NULL OR updated_at < ?) AND id = ANY(CAST(? AS BIGINT[])) RETURNING id, path`,
  ftsDeletePg: 'DELETE FROM search_fts WHERE rowid = ANY(CAST(? AS BIGINT[]))',
  noteRemovalsPg: `INSERT INTO node_removals (tenant_id, storage_id, path, removed_at)
    SELECT CAST(? AS BIGINT), CAST(? AS BIGINT), p, CAST(? AS TEXT) FROM unnest(CAST(? AS TEXT[])) AS u(p)
    ON CONFLICT (storage_id, path) DO UPDATE SET removed_at = excluded.removed_at WHERE node_removals.tenant_id = excluded.tenant_id`,
  byPath: 'SELECT * FROM nodes WHERE tenant_id = ? AND storage_id = ? AND path = ?',
  byId: 'SELECT * FROM nodes WHERE tenant_id = ? AND id = ?',
  count: 'SELECT count(*) AS n FROM nodes WHERE tenant_id = ? AND storage_id = ? AND dir = ? AND deleted_at IS NULL',
  insert: `INSERT INTO nodes (tenant_id, storage_id, dir, name, path, type, size, mtime, etag, mime, sort_key, owner_id, updated_at)
                 VALUES (@tenant_id, @storage_id, @dir, @name, @path, @type, @size, @mtime, @etag, @mime, @sort_key, @owner_id, @updated_at)
                 ON CONFLICT(storage_id, path) DO UPDATE SET type = excluded.type, size = excluded.size, mtime = excluded.mtime,
                   etag = excluded.etag, mime = excluded.mime, deleted_at = NULL, updated_at = excluded.updated_at,
                   owner_id = COALESCE(excluded.owner_id, nodes.owner_id),
                   thumb_state = CASE WHEN nodes.size != excluded.size OR nodes.mtime != excluded.mtime OR COALESCE(nodes.etag,'') != COALESCE(excluded.etag,'') THEN NULL ELSE nodes.thumb_state END
                 WHERE nodes.tenant_id = excluded.tenant_id
                 RETURNING id`,
  ftsInsert: 'INSERT INTO search_fts (rowid, name, body) VALUES (?, ?, ?)',
  ftsDelete: 'DELETE FROM search_fts WHERE rowid = ?',
  ftsBody: 'UPDATE search_fts SET body = ? WHERE rowid = ?',
  ftsName: 'UPDATE search_fts SET name = ? WHERE rowid = ?',
  deleteTree: `DELETE FROM nodes WHERE tenant_id = ? AND ${SUBTREE} RETURNING id, type, size, deleted_at`,
  deleteAll: 'DELETE FROM nodes WHERE tenant_id = ? AND storage_id = ? RETURNING id, type, size, deleted_at',
  subtreeRows: `SELECT id, path FROM nodes WHERE tenant_id = ? AND ${SUBTREE}`,
  rekey: 'UPDATE nodes SET path = ?, dir = ?, name = ?, sort_key = ?, updated_at = ? WHERE tenant_id = ? AND id = ?',
};

/**
 * Statements come as generators (`*getIn(t, …)`): the write gate and the sync engine run them inside their
 * own unit of work (`db.async.unit`), with the outbox rows that describe the change. The plain-named reads
 * are the same statements on `db.async.read`.
 */
export class NodesRepo {
  private prunedAt = 0;
  constructor(private db: Db) {}

  *getIn(t: Tx, s: StorageRef, path: string) {
    return (yield* t.sql<NodeRow>(Q.byPath, [s.tenant_id, s.id, path]))[0] as NodeRow | undefined;
  }

  /** The tenant's node `id`; undefined for another tenant's (as for a missing one). */
  *byIdIn(t: Tx, scope: TenantScope, id: number) {
    return (yield* t.sql<NodeRow>(Q.byId, [scope.tenant_id, id]))[0] as NodeRow | undefined;
  }

  /** Rows of one folder, folders first, in the requested order; plus the folder's total. */
  *listIn(t: Tx, s: StorageRef, dir: string, o: ListOptions) {
    const d = o.desc ? 'DESC' : 'ASC';
    const order = ORDER[o.sort].replace(/\{d\}/g, d);
    let keyset = '';
    const args: unknown[] = [s.tenant_id, s.id, dir];
    if (o.after && o.sort === 'name') {
      const cmp = o.desc ? '<' : '>';
      keyset = ` AND (type, sort_key, id) ${cmp} (?, ?, ?)`;
      args.push(o.after.type, o.after.key, o.after.id);
    }
    const rows = yield* t.sql<NodeRow>(
      `SELECT * FROM nodes WHERE tenant_id = ? AND storage_id = ? AND dir = ? AND deleted_at IS NULL${keyset} ORDER BY ${order} LIMIT ? OFFSET ?`,
      [...args, o.limit, o.after ? 0 : o.offset],
    );
    const [{ n }] = yield* t.sql<{ n: number }>(Q.count, [s.tenant_id, s.id, dir]);
    return { rows, total: Number(n) };
  }

  /** Inserts or refreshes one entry at `path`; returns its id. */
  *upsertIn(t: Tx, s: StorageRef, path: string, e: Entry, ownerId: number | null = null) {
    const mime = e.type === 'dir' ? null : (e.mime ?? mimeOf(e.name));
    const existing = yield* this.getIn(t, s, path);
    const [row] = yield* t.sql<{ id: number }>(Q.insert, {
      tenant_id: s.tenant_id,
      storage_id: s.id,
      dir: parentRel(path),
      name: baseName(path),
      path,
      type: e.type,
      size: e.type === 'dir' ? 0 : e.size,
      mtime: Math.round(e.mtime),
      etag: e.etag ?? null,
      mime,
      sort_key: sortKey(baseName(path)),
      owner_id: ownerId,
      updated_at: new Date().toISOString(),
    });
    // No row back: the path is another tenant's storage's (the conflict branch names the tenant), nothing written.
    if (!row) throw new AppError('not_found', { path });
    const id = Number(row.id);
    if (!existing) yield* t.sql(Q.ftsInsert, [id, baseName(path), null]);
    return id;
  }

  /** Stores the extracted text of a small text file for full-text search. */
  *setBodyIn(t: Tx, id: number, body: string | null) {
    yield* t.sql(Q.ftsBody, [body, id]);
  }

  /** Makes sure every ancestor folder of `path` has a row (writes can create parents). */
  *ensureParentsIn(t: Tx, s: StorageRef, path: string) {
    let dir = parentRel(path);
    const missing: string[] = [];
    while (dir !== '' && !(yield* this.getIn(t, s, dir))) {
      missing.push(dir);
      dir = parentRel(dir);
    }
    for (const p of missing.reverse()) yield* this.upsertIn(t, s, p, { name: baseName(p), type: 'dir', size: 0, mtime: Date.now() });
  }

  /** Removes a node and everything below it (and their search rows). Returns the removed ids. */
  *removeTreeIn(t: Tx, s: StorageRef, path: string) {
    return (yield* this.removeTreeCountedIn(t, s, path)).ids;
  }

  /** As `removeTreeIn`, with the live files the removal took and their bytes (the tenant's usage: tenant-usage.ts). */
  *removeTreeCountedIn(t: Tx, s: StorageRef, path: string) {
    const rows = yield* t.sql<{ id: number; type: string; size: number; deleted_at: string | null }>(
      path === '' ? Q.deleteAll : Q.deleteTree,
      path === '' ? [s.tenant_id, s.id] : subtree(s, path),
    );
    const ids = rows.map((r) => Number(r.id));
    const live = rows.filter((r) => r.type === 'file' && !r.deleted_at);
    for (const id of ids) yield* t.sql(Q.ftsDelete, [id]);
    if (ids.length) yield* this.noteRemovedIn(t, s, path);
    return { ids, freed: { bytes: live.reduce((n, r) => n + Number(r.size), 0), files: live.length } };
  }

  /**
   * Removes the file rows `ids` of a storage that were not written at or after `since` (a sync's delete pass,
   * set-based: one statement per 500 rows instead of a read and a delete per row), with their search rows;
   * the removals are noted as `removeTreeIn` notes them. Returns the rows removed (ids that are no file, or
   * gone already, are skipped).
   */
  *removeFilesIn(t: Tx, s: StorageRef, ids: readonly number[], since: string) {
    const out: Array<{ id: number; path: string }> = [];
    const pg = this.db.dialect === 'postgres';
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = ids.slice(i, i + 500);
      // SQLite: one statement text whatever the chunk's size (0 is no id), so it stays prepared.
      const padded = pg ? chunk : [...chunk, ...Array<number>(500 - chunk.length).fill(0)];
      const rows = yield* t.sql<{ id: number; path: string }>(
        pg ? Q.deleteFilesPg : Q.deleteFilesSqlite,
        pg ? [s.tenant_id, s.id, since, chunk] : [s.tenant_id, s.id, since, ...padded],
      );
      if (!rows.length) continue;
      const gone = rows.map((r) => Number(r.id));
      if (pg) yield* t.sql(Q.ftsDeletePg, [gone]);
      else yield* t.sql(Q.ftsDeleteSqlite, [...gone, ...Array<number>(500 - gone.length).fill(0)]);
      for (const r of rows) out.push({ id: Number(r.id), path: r.path });
    }
    if (!out.length) return out;
    if (pg) yield* t.sql(Q.noteRemovalsPg, [s.tenant_id, s.id, new Date().toISOString(), out.map((r) => r.path)]);
    else for (const r of out) yield* this.noteRemovedIn(t, s, r.path);
    return out;
  }

  /**
   * Whether anything left the storage's catalogue at or after `since` (an ISO time); also true when
   * `since` is older than the removals are kept, since then it cannot tell.
   */
  async removedSince(s: StorageRef, since: string): Promise<boolean> {
    if (Date.now() - Date.parse(since) > REMOVALS_MS - PRUNE_EVERY_MS) return true;
    return (await this.db.async.sql(Q.anyRemovalSince, [s.tenant_id, s.id, since])).length > 0;
  }

  /** Remembered in the database, so a sync on any instance sees it (`removalsSince`). */
  private *noteRemovedIn(t: Tx, s: StorageRef, path: string) {
    const now = Date.now();
    yield* t.sql(Q.noteRemoval, [s.tenant_id, s.id, path, new Date(now).toISOString()]);
    if (now - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = now;
    yield* t.sql(Q.pruneRemovals, [new Date(now - REMOVALS_MS).toISOString()]);
  }

  /**
   * Whether a path left the catalogue at or after `since` (an ISO time), itself or a folder above it:
   * one query per call, then a predicate over the removals it found (usually none).
   */
  *removalsSinceIn(t: Tx, s: StorageRef, since: string) {
    const gone = new Set((yield* t.sql<{ path: string }>(Q.removalsSince, [s.tenant_id, s.id, since])).map((r) => r.path));
    if (gone.size === 0) return () => false;
    return (path: string) => {
      if (gone.has('') || gone.has(path)) return true;
      for (let i = path.indexOf('/'); i >= 0; i = path.indexOf('/', i + 1)) if (gone.has(path.slice(0, i))) return true;
      return false;
    };
  }

  /**
   * Re-keys a subtree after a move or rename within one storage (the ids, and
   * with them thumbnails and shares, survive). Target rows are replaced.
   */
  *moveTreeIn(t: Tx, s: StorageRef, from: string, to: string) {
    yield* this.removeTreeIn(t, s, to);
    yield* this.noteRemovedIn(t, s, from);
    const rows = yield* t.sql<{ id: number; path: string }>(Q.subtreeRows, subtree(s, from));
    const now = new Date().toISOString();
    for (const r of rows) {
      const p = to + r.path.slice(from.length);
      yield* t.sql(Q.rekey, [p, parentRel(p), baseName(p), sortKey(baseName(p)), now, s.tenant_id, r.id]);
      if (r.path === from) yield* t.sql(Q.ftsName, [baseName(p), r.id]);
    }
  }

  /** The row at `path` (deleted ones too), or undefined. */
  get(s: StorageRef, path: string): Promise<NodeRow | undefined> {
    return this.db.async.read((t) => this.getIn(t, s, path));
  }

  /** The rows at `paths` (undefined where none), in their order: one read, however many paths. */
  getMany(s: StorageRef, paths: readonly string[]): Promise<Array<NodeRow | undefined>> {
    const getIn = this.getIn.bind(this);
    return this.db.async.read(function* (t) {
      const out: Array<NodeRow | undefined> = [];
      for (const p of paths) out.push(yield* getIn(t, s, p));
      return out;
    });
  }

  /** The tenant's row with `id`, or undefined (another tenant's too). */
  byId(scope: TenantScope, id: number): Promise<NodeRow | undefined> {
    return this.db.async.read((t) => this.byIdIn(t, scope, id));
  }

  /** See `listIn`. */
  list(s: StorageRef, dir: string, o: ListOptions): Promise<{ rows: NodeRow[]; total: number }> {
    return this.db.async.read((t) => this.listIn(t, s, dir, o));
  }

  /** Bytes and count of the tenant's live files (`storageId` narrows to a storage, `ownerId` to one uploader). */
  async usage(scope: TenantScope, q: { storageId?: number; ownerId?: number }): Promise<{ used_bytes: number; file_count: number }> {
    let sel = this.db.k
      .selectFrom('nodes')
      .select((eb) => [eb.fn.coalesce(eb.fn.sum<number>('size'), eb.lit(0)).as('used_bytes'), eb.fn.countAll<number>().as('file_count')])
      .where('tenant_id', '=', scope.tenant_id)
      .where('type', '=', 'file')
      .where('deleted_at', 'is', null);
    if (q.storageId !== undefined) sel = sel.where('storage_id', '=', q.storageId);
    if (q.ownerId !== undefined) sel = sel.where('owner_id', '=', q.ownerId);
    return (await this.db.async.first(sel))!;
  }

  /**
   * Live rows at and below `rel` (the whole storage for ''), in path order:
   * what a folder ZIP or an archive job will read. `rel` itself comes first.
   */
  subtree(s: StorageRef, rel: string): Promise<Array<Pick<NodeRow, 'path' | 'type' | 'size' | 'mtime'>>> {
    let sel = this.db.k
      .selectFrom('nodes')
      .select(['path', 'type', 'size', 'mtime'])
      .where('tenant_id', '=', s.tenant_id)
      .where('storage_id', '=', s.id)
      .where('deleted_at', 'is', null);
    // '0' is the code point after '/': the range is exactly the paths below `rel/`.
    if (rel !== '') sel = sel.where((eb) => eb.or([eb('path', '=', rel), eb.and([eb('path', '>=', `${rel}/`), eb('path', '<', `${rel}0`)])]));
    return this.db.async.all(sel.orderBy('path'));
  }

  /** Sum of the file sizes at and below `rel`, from the catalogue. */
  async treeBytes(s: StorageRef, rel: string): Promise<number> {
    let sel = this.db.k
      .selectFrom('nodes')
      .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('size'), eb.lit(0)).as('n'))
      .where('tenant_id', '=', s.tenant_id)
      .where('storage_id', '=', s.id)
      .where('type', '=', 'file')
      .where('deleted_at', 'is', null);
    if (rel !== '') sel = sel.where((eb) => eb.or([eb('path', '=', rel), eb.and([eb('path', '>=', `${rel}/`), eb('path', '<', `${rel}0`)])]));
    return (await this.db.async.first(sel))!.n;
  }

  /** Whether a mime/size qualifies for full-text indexing. */
  static textual(mime: string | null, size: number): boolean {
    return isText(mime) && size > 0 && size <= 256 * 1024;
  }
}
