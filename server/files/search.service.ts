/**
 * Search over the catalogue: substring match on names and on the stored text
 * of files (small text files from the write gate, documents from the text
 * extraction: server/fulltext; FTS5 trigram on SQLite, pg_trgm on
 * PostgreSQL; queries under 3 characters fall back to a name scan), metadata
 * filters, and only storages the caller may read. Answers in the listing
 * shape, each entry with its full `path`, `match` (`name`, `content`, or
 * `metadata` for a filter-only search) and, for a content match, a `snippet`
 * of the text around the hit (snippet.ts).
 */
import type { AsyncDb, Db } from '../db';
import type { ActorFiles } from './actor-files';
import { AppError } from '../errors';
import { uiPath } from '../lib/paths';
import { entryJsonSql, lockJoin, stampThumbs } from './entry';
import { confinement } from './access';
import { TextExtractsRepo } from '../catalogue';
import { queryPattern, snippetOf, WINDOW_BEFORE, WINDOW_SPAN } from './snippet';

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
  private texts: TextExtractsRepo;

  /** `anyLocks()`: whether any storage may hold app locks (results then join them; FileLocks.anyAtAll). */
  constructor(
    private db: Db,
    private stamp?: (id: number) => string,
    private anyLocks: () => boolean = () => false,
  ) {
    this.texts = new TextExtractsRepo(db);
  }

  /**
   * Matching entries, folders first then natural name order; `not_found` for a scope the caller cannot see.
   * SQLite answers in-process; PostgreSQL on the async reader, the page and its total in one statement, so
   * the event loop serves other requests during the round trip and the match runs once.
   */
  async search(fa: ActorFiles, s: SearchInput): Promise<SearchResult> {
    const plan = this.plan(fa, s);
    if (!('from' in plan)) return plan.empty;
    const { empty, from, args } = plan;
    const locks = this.anyLocks();
    const { rows, total } =
      this.db.dialect === 'postgres' ? await pagedPg(this.db.async, from, args, s.limit, locks) : await this.paged(from, args, s.limit, locks);
    const extra = await this.matches(rows, s.q.trim());
    const entriesJson =
      '[' + rows.map(([json, storage, path], i) => `${json.slice(0, -1)},"path":${JSON.stringify(uiPath(storage, path))}${extra[i]}}`).join(',') + ']';
    return { ...empty, entriesJson: stampThumbs(entriesJson, this.stamp), total };
  }

  /**
   * Each row's `match` and, for content matches, `snippet` (as JSON members to append). A row whose name
   * holds the query matched by name (the databases' case folding is close to JavaScript's `iu`); the others
   * by their text, whose windows around the hit come in one read for the page.
   */
  private async matches(rows: Row[], q: string): Promise<string[]> {
    if (q === '') return rows.map(() => ',"match":"metadata"');
    const inName = queryPattern(q);
    const byContent = q.length >= 3 ? rows.filter(([, , path]) => !inName.test(path.slice(path.lastIndexOf('/') + 1))).map((r) => Number(r[3])) : [];
    const windows = await this.texts.windows(byContent, q, WINDOW_BEFORE, WINDOW_SPAN);
    const content = new Set(byContent);
    return rows.map((r) => {
      const id = Number(r[3]);
      if (!content.has(id)) return ',"match":"name"';
      const w = windows.get(id);
      return w === undefined ? ',"match":"content"' : `,"match":"content","snippet":${JSON.stringify(snippetOf(w, q))}`;
    });
  }

  /** The caller's scope and the match as SQL (`%COLS%` and `%JOIN%` left open), or the empty answer. */
  private plan(fa: ActorFiles, s: SearchInput): { empty: SearchResult } | { empty: SearchResult; from: string; args: Record<string, unknown> } {
    const seen = fa.visible();
    // A storage passed through on the way to granted folders (a home) is searched only inside them: when it is
    // the one storage in sight with one such folder, or the scope lies inside one (below). Never the rest of it.
    const home = seen.length === 1 && seen[0].through?.length === 1 ? { storage_id: seen[0].storage.id, rel: seen[0].through[0] } : null;
    let storages = seen
      .filter((x) => !x.through || home)
      .map(({ storage, level }) => ({ id: storage.id, name: storage.name, driver: storage.driver, ro: !!storage.read_only, level }));
    // A key's root (or a link's item) bounds every search; a scope on the way down to it searches the root.
    const bound = confinement(fa.actor) ?? home;
    let prefix = bound?.rel ?? '';
    if (bound && prefix) {
      const level = fa.target(bound).level;
      storages = storages.map((x) => ({ ...x, level }));
    }
    if (s.path && s.path.replace(/^\/+/, '') !== '') {
      const r = fa.target(s.path, 'viewer', { passage: true });
      const inHome = r.passage === undefined && seen.some((x) => x.storage.id === r.storage.id && x.through);
      if (inHome) storages = [{ id: r.storage.id, name: r.storage.name, driver: r.storage.driver, ro: !!r.storage.read_only, level: r.level }];
      storages = storages.filter((x) => x.id === r.storage.id);
      if (r.passage === undefined) prefix = r.rel;
    }
    const one = storages.length === 1 && s.path ? storages[0] : null;
    const empty = {
      path: s.path || '/',
      entriesJson: '[]',
      total: 0,
      storage: one ? { name: one.name, driver: one.driver, readonly: one.ro } : { name: '', driver: '', readonly: true },
    };
    if (storages.length === 0) return { empty };

    const args: Record<string, unknown> = {};
    const where: string[] = ['n.deleted_at IS NULL'];
    const q = s.q.trim();
    let nodes = 'nodes n';
    if (q.length >= 3 && this.db.dialect === 'postgres') {
      // Substring search on pg_trgm GIN indexes: case-free, like FTS5's trigram phrase. Names match on
      // `nodes` itself (nodes_name_trgm): the recheck reads the row the answer needs anyway. Text matches
      // come from search_fts, each node by its key (the OFFSET 0 fence keeps the lateral lookup: on a
      // misestimate the planner hashed the hits against a scan of all of `nodes`), minus name hits.
      const like = "ILIKE @like ESCAPE '\\'";
      nodes = `(SELECT * FROM nodes WHERE name ${like} UNION ALL SELECT b.* FROM search_fts f CROSS JOIN LATERAL (SELECT * FROM nodes WHERE id = f.rowid OFFSET 0) b WHERE f.body ${like} AND b.name NOT ${like}) n`;
      args.like = `%${q.replace(/[\\%_]/g, (c) => '\\' + c)}%`;
    } else if (q.length >= 3) {
      where.push('n.id IN (SELECT rowid FROM search_fts WHERE search_fts MATCH @q)');
      args.q = `"${q.replace(/"/g, '""')}"`;
    } else if (q.length > 0) {
      where.push("n.name LIKE @like ESCAPE '\\'");
      args.like = `%${q.replace(/[\\%_]/g, (c) => '\\' + c)}%`;
    }
    if (prefix) {
      where.push('(n.path >= @pre1 AND n.path < @pre2)');
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
    if (s.min_size !== undefined) where.push('n.size >= @min'), (args.min = s.min_size);
    if (s.max_size !== undefined) where.push('n.size <= @max'), (args.max = s.max_size);
    if (s.after !== undefined) where.push('n.mtime >= @after'), (args.after = s.after);
    if (s.before !== undefined) where.push('n.mtime < @before'), (args.before = s.before);
    if (where.length === 1 && nodes === 'nodes n')
      throw new AppError('validation_failed', { field: 'q', reason: 'a query or a filter is required' }, { field: 'q' });

    // The caller's storages and levels as a VALUES table, so perm and the storage name come from one join.
    // Typed: a VALUES row of bare parameters is text on PostgreSQL.
    const lv = storages.map((x, i) => `(CAST(@sid${i} AS BIGINT), CAST(@perm${i} AS TEXT), CAST(@sname${i} AS TEXT))`).join(',');
    storages.forEach((x, i) => Object.assign(args, { [`sid${i}`]: x.id, [`perm${i}`]: x.level, [`sname${i}`]: x.name }));
    const from = `WITH lv(lv_sid, lv_perm, lv_name) AS (VALUES ${lv}) SELECT %COLS% FROM ${nodes} JOIN lv ON lv.lv_sid = n.storage_id%JOIN% WHERE ${where.join(' AND ')}`;
    return { empty, from, args };
  }

  /** The page and its total as two statements (SQLite: in-process, each cheap). */
  private async paged(from: string, args: Record<string, unknown>, limit: number, locks: boolean): Promise<{ rows: Row[]; total: number }> {
    const entry = entryJsonSql(this.db.dialect, locks).replace(/@perm/g, 'lv.lv_perm');
    const page =
      from.replace('%COLS%', `${entry}, lv.lv_name, n.path, n.id`).replace('%JOIN%', locks ? lockJoin('n') : '') +
      ' ORDER BY n.type, n.sort_key, n.id LIMIT @limit';
    const [rows, [[total]]] = await Promise.all([
      this.db.async.sql<Row>(page, { ...args, limit }, { raw: true }),
      this.db.async.sql<[number]>(from.replace('%COLS%', 'count(*)').replace('%JOIN%', ''), args, { raw: true }),
    ]);
    return { rows, total };
  }
}

/** A result row: the entry's JSON, the storage's name, the path in it, the node's id. */
type Row = [string, string, string, number];

/**
 * PostgreSQL's statement: the match runs once; the window count is taken over every hit before the LIMIT,
 * and the entry JSON is built only for the page's rows, from the rows the hits carry (no second lookup).
 */
export function pgSearchSql(from: string, locks: boolean): string {
  const hits = from.replace('%COLS%', 'n.*, lv.lv_perm AS h_perm, lv.lv_name AS h_storage, count(*) OVER () AS h_total').replace('%JOIN%', '');
  const entry = entryJsonSql('postgres', locks).replace(/@perm/g, 'n.h_perm');
  return `SELECT ${entry}, n.h_storage, n.path, n.id, n.h_total FROM (${hits} ORDER BY n.type, n.sort_key, n.id LIMIT @limit) n${locks ? lockJoin('n') : ''}
  ORDER BY n.type, n.sort_key, n.id`;
}

async function pagedPg(db: AsyncDb, from: string, args: Record<string, unknown>, limit: number, locks: boolean): Promise<{ rows: Row[]; total: number }> {
  const got = await db.sql<[string, string, string, number, number]>(pgSearchSql(from, locks), { ...args, limit }, { raw: true });
  // A page of at least one row holds the total; no row means no hit (the limit is at least 1).
  return { rows: got.map(([json, storage, path, id]) => [json, storage, path, id]), total: Number(got[0]?.[4] ?? 0) };
}
