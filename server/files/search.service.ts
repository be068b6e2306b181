/**
 * Search over the catalogue: substring match on names and on the text of
 * small text files (FTS5 trigram; queries under 3 characters fall back to a
 * name scan), metadata filters, and only storages the caller may read.
 * Answers in the listing shape, each entry with its full `path`.
 */
import type { Db } from '../db';
import type { ActorFiles } from './actor-files';
import { AppError } from '../errors';
import { uiPath } from '../lib/paths';
import { entryJsonSql, lockJoin, stampThumbs } from './entry';
import { confinement } from './access';

export interface SearchInput {
  q: string;
  type?: 'file' | 'dir';
  ext?: string[];
  min_size?: number;
  max_size?: number;
  /** Modified at or after (epoch ms). */
  after?: number;
  /** Modified before (epoch ms). */
  before?: number;
  /** UI path that scopes the search (a storage or a folder). */
  path?: string;
  limit: number;
}

export interface SearchResult {
  path: string;
  entriesJson: string;
  total: number;
  storage: { name: string; driver: string; readonly: boolean };
}

export class SearchService {
  /** `anyLocks()`: whether any storage may hold app locks (results then join them; FileLocks.anyAtAll). */
  constructor(private db: Db, private stamp?: (id: number) => string, private anyLocks: () => boolean = () => false) {}

  /** Matching entries, folders first then natural name order; `not_found` for a scope the caller cannot see. */
  search(fa: ActorFiles, s: SearchInput): SearchResult {
    let storages = fa.visible().map(({ storage, level }) => ({ id: storage.id, name: storage.name, driver: storage.driver, ro: !!storage.read_only, level }));
    // A key's root (or a link's item) bounds every search; a scope on the way down to it searches the root.
    const bound = confinement(fa.actor);
    let prefix = bound?.rel ?? '';
    if (bound && prefix) {
      const level = fa.target(bound).level;
      storages = storages.map((x) => ({ ...x, level }));
    }
    if (s.path && s.path.replace(/^\/+/, '') !== '') {
      const r = fa.target(s.path, 'viewer', { passage: true });
      storages = storages.filter((x) => x.id === r.storage.id);
      if (r.passage === undefined) prefix = r.rel;
    }
    const one = storages.length === 1 && s.path ? storages[0] : null;
    const empty = { path: s.path || '/', entriesJson: '[]', total: 0, storage: one ? { name: one.name, driver: one.driver, readonly: one.ro } : { name: '', driver: '', readonly: true } };
    if (storages.length === 0) return empty;

    const args: Record<string, unknown> = {};
    const where: string[] = ['n.deleted_at IS NULL'];
    const q = s.q.trim();
    if (q.length >= 3 && this.db.dialect === 'postgres') {
      // Substring search on the pg_trgm GIN indexes: case-free, like FTS5's trigram phrase.
      where.push("n.id IN (SELECT rowid FROM search_fts WHERE name ILIKE @like ESCAPE '\\' OR body ILIKE @like ESCAPE '\\')");
      args.like = `%${q.replace(/[\\%_]/g, (c) => '\\' + c)}%`;
    } else if (q.length >= 3) {
      where.push('n.id IN (SELECT rowid FROM search_fts WHERE search_fts MATCH @q)');
      args.q = `"${q.replace(/"/g, '""')}"`;
    } else if (q.length > 0) {
      where.push("n.name LIKE @like ESCAPE '\\'");
      args.like = `%${q.replace(/[\\%_]/g, (c) => '\\' + c)}%`;
    }
    if (prefix) {
      where.push("(n.path >= @pre1 AND n.path < @pre2)");
      Object.assign(args, { pre1: prefix + '/', pre2: prefix + '0' });
    }
    if (s.type) {
      where.push('n.type = @type');
      args.type = s.type;
    }
    if (s.ext?.length) {
      where.push('(' + s.ext.map((_, i) => `lower(n.name) LIKE @ext${i} ESCAPE '\\'`).join(' OR ') + ')');
      s.ext.forEach((e, i) => (args[`ext${i}`] = `%.${e.toLowerCase().replace(/[\\%_]/g, (c) => '\\' + c)}`));
    }
    if (s.min_size !== undefined) (where.push('n.size >= @min'), (args.min = s.min_size));
    if (s.max_size !== undefined) (where.push('n.size <= @max'), (args.max = s.max_size));
    if (s.after !== undefined) (where.push('n.mtime >= @after'), (args.after = s.after));
    if (s.before !== undefined) (where.push('n.mtime < @before'), (args.before = s.before));
    if (where.length === 1) throw new AppError('validation_failed', { field: 'q', reason: 'a query or a filter is required' }, { field: 'q' });

    // The caller's storages and levels as a VALUES table, so perm and the storage name come from one join.
    // Typed: a VALUES row of bare parameters is text on PostgreSQL.
    const lv = storages.map((x, i) => `(CAST(@sid${i} AS BIGINT), CAST(@perm${i} AS TEXT), CAST(@sname${i} AS TEXT))`).join(',');
    storages.forEach((x, i) => Object.assign(args, { [`sid${i}`]: x.id, [`perm${i}`]: x.level, [`sname${i}`]: x.name }));
    const from = `WITH lv(lv_sid, lv_perm, lv_name) AS (VALUES ${lv}) SELECT %COLS% FROM nodes n JOIN lv ON lv.lv_sid = n.storage_id%JOIN% WHERE ${where.join(' AND ')}`;
    const locks = this.anyLocks();
    const entry = entryJsonSql(this.db.dialect, locks).replace(/@perm/g, 'lv.lv_perm');
    const rows = this.db.sqlite
      .prepare(from.replace('%COLS%', `${entry}, lv.lv_name, n.path`).replace('%JOIN%', locks ? lockJoin('n') : '') + ' ORDER BY n.type, n.sort_key, n.id LIMIT @limit')
      .raw()
      .all({ ...args, limit: s.limit }) as Array<[string, string, string]>;
    const total = this.db.sqlite.prepare(from.replace('%COLS%', 'count(*)').replace('%JOIN%', '')).pluck().get(args) as number;
    const entriesJson = '[' + rows.map(([json, storage, path]) => `${json.slice(0, -1)},"path":${JSON.stringify(uiPath(storage, path))}}`).join(',') + ']';
    return { ...empty, entriesJson: stampThumbs(entriesJson, this.stamp), total };
  }
}
