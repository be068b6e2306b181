/**
 * The search's statement (search.service.ts decides who may see what): the query's terms, the filters and the
 * caller's storages as SQL, run as one statement that answers a page and the total. SQLite matches on FTS5
 * trigram tables, PostgreSQL on pg_trgm GIN indexes.
 */
import { escapeLike, type Db } from '../db';
import { entryJsonSql, lockJoin } from './entry';
import type { SearchQuery } from './search-query';

/**
 * The storages searched, each with its tenant (a hit must carry it: docs/tenants.md), the caller's level and its
 * name (the entry's `perm`, the result's path).
 */
export interface SearchScope {
  storages: Array<{ id: number; tenant_id: number; name: string; level: string }>;
  /** Only below this folder (`''`: the whole storages). */
  prefix: string;
  /** Encrypted folders: neither they nor what is inside are results (their names are ciphertext). */
  excluded: Array<{ storage_id: number; rel: string }>;
}

/** The filters of a search (SearchInput adds the query, the scope and the page size). */
export interface SearchFilters {
  type?: 'file' | 'dir';
  ext?: string[];
  min_size?: number;
  max_size?: number;
  /** Modified at or after (epoch ms). */
  after?: number;
  /** Modified before (epoch ms). */
  before?: number;
  /** Taken (a photo) or recorded (audio, video) at or after, at or before (epoch ms): files without the date are left out. */
  taken_from?: number;
  taken_to?: number;
}

/** A result row: the entry's JSON, the storage's name, the path in it, the node's id. */
export type SearchRow = [string, string, string, number];

export class SearchRepo {
  constructor(private db: Db) {}

  /**
   * One page of matches, folders first then natural name order, and the total. It runs aside (db/async.ts): on
   * SQLite on a reader thread, on PostgreSQL on the pool, so the event loop serves other requests meanwhile.
   */
  async page(query: SearchQuery, filters: SearchFilters, scope: SearchScope, limit: number, locks: boolean): Promise<{ rows: SearchRow[]; total: number }> {
    const { from, args } = this.from(query, filters, scope);
    const got = await this.db.async.aside.sql<[string, string, string, number, number]>(
      searchSql(this.db.dialect, from, locks),
      { ...args, limit },
      { raw: true },
    );
    // A page of at least one row holds the total; no row means no hit (the limit is at least 1).
    return { rows: got.map(([json, storage, path, id]) => [json, storage, path, id]), total: Number(got[0]?.[4] ?? 0) };
  }

  /** The match, the filters and the scope as SQL (`%COLS%` and `%JOIN%` left open) with its parameters. */
  private from(query: SearchQuery, s: SearchFilters, scope: SearchScope): { from: string; args: Record<string, unknown> } {
    const args: Record<string, unknown> = {};
    const where: string[] = ['n.deleted_at IS NULL'];
    // The storages' tenants as parameters (@xt0, …), for the statements over tenant-owned rows besides the join below.
    const tenants = [...new Set(scope.storages.map((x) => x.tenant_id))];
    tenants.forEach((t, i) => (args[`xt${i}`] = t));
    const tids = tenants.map((_, i) => `@xt${i}`).join(',');
    const nodes = this.matchTerms(query, where, args, tids);
    if (scope.prefix) {
      where.push('(n.path >= @pre1 AND n.path < @pre2)');
      Object.assign(args, { pre1: scope.prefix + '/', pre2: scope.prefix + '0' });
    }
    if (s.type) {
      where.push('n.type = @type');
      args.type = s.type;
    }
    if (s.ext?.length) {
      where.push('(' + s.ext.map((_, i) => `lower(n.name) LIKE @ext${i} ESCAPE '\\'`).join(' OR ') + ')');
      s.ext.forEach((e, i) => (args[`ext${i}`] = `%.${escapeLike(e.toLowerCase())}`));
    }
    if (s.min_size !== undefined) where.push('n.size >= @min'), (args.min = s.min_size);
    if (s.max_size !== undefined) where.push('n.size <= @max'), (args.max = s.max_size);
    if (s.after !== undefined) where.push('n.mtime >= @after'), (args.after = s.after);
    if (s.before !== undefined) where.push('n.mtime < @before'), (args.before = s.before);
    if (s.taken_from !== undefined || s.taken_to !== undefined) {
      const taken = ['taken IS NOT NULL'];
      if (s.taken_from !== undefined) taken.push('taken >= @taken_from'), (args.taken_from = s.taken_from);
      if (s.taken_to !== undefined) taken.push('taken <= @taken_to'), (args.taken_to = s.taken_to);
      where.push(`n.id IN (SELECT node_id FROM text_extracts WHERE tenant_id IN (${tids}) AND ${taken.join(' AND ')})`);
    }
    scope.excluded.forEach((r, e) => {
      where.push(`NOT (n.storage_id = @es${e} AND (n.path = @er${e} OR (n.path >= @ea${e} AND n.path < @eb${e})))`);
      Object.assign(args, { [`es${e}`]: r.storage_id, [`er${e}`]: r.rel, [`ea${e}`]: r.rel + '/', [`eb${e}`]: r.rel + '0' });
    });
    // The caller's storages, their tenants and levels as a VALUES table, so perm and the storage name come from one
    // join, and a hit must carry its storage's tenant. Typed: a VALUES row of bare parameters is text on PostgreSQL.
    const lv = scope.storages
      .map((_, i) => `(CAST(@sid${i} AS BIGINT), CAST(@tid${i} AS BIGINT), CAST(@perm${i} AS TEXT), CAST(@sname${i} AS TEXT))`)
      .join(',');
    scope.storages.forEach((x, i) => Object.assign(args, { [`sid${i}`]: x.id, [`tid${i}`]: x.tenant_id, [`perm${i}`]: x.level, [`sname${i}`]: x.name }));
    // SQLite with a text match: the FTS hits must drive, each looked up by its id in `nodes_search_keys` (storage,
    // type, sort key and path of the live rows beside the id: the whole rows of ~3,000 hits cost twice the pages).
    // Left to choose, the planner looked the hits up in the table, or walked every node of the storage against
    // the hit list through its listing index (280 ms of CPU a search at 1,000,000 files; docs/benchmarks.md).
    const keyed = this.db.dialect !== 'postgres' && 'q' in args ? ' INDEXED BY nodes_search_keys' : '';
    const from = `WITH lv(lv_sid, lv_tid, lv_perm, lv_name) AS (VALUES ${lv}) SELECT %COLS% FROM ${nodes}${keyed} JOIN lv ON lv.lv_sid = n.storage_id AND lv.lv_tid = n.tenant_id%JOIN% WHERE ${where.join(' AND ')}`;
    return { from, args };
  }

  /**
   * The query's terms as SQL: pushes their clauses on `where` and answers the row source. Terms of 3 characters or more are matched in
   * the name or the stored text on the trigram indexes; shorter ones in names only (no index serves them).
   * `tids`: the searched tenants' parameters.
   */
  private matchTerms(query: SearchQuery, where: string[], args: Record<string, unknown>, tids: string): string {
    const pg = this.db.dialect === 'postgres';
    const like = (t: string) => `%${escapeLike(t)}%`;
    const op = pg ? 'ILIKE' : 'LIKE';
    const long = query.all.filter((t) => t.length >= 3);
    const longNot = query.none.filter((t) => t.length >= 3);
    query.all.forEach((t, i) => {
      if (t.length < 3) where.push(`n.name ${op} @s${i} ESCAPE '\\'`), (args[`s${i}`] = like(t));
    });
    let nodes = 'nodes n';
    if (pg) {
      // Substring search on pg_trgm GIN indexes: case-free, like FTS5's trigram phrase. The rows come from one
      // branch each, so none comes twice: the first term found in its name (names on `nodes` itself,
      // nodes_name_trgm), else every term found in its text or metadata (search_fts, every term's index
      // scan, so PostgreSQL drives by the rarest: a common and a rare word 726 -> 36-54 ms;
      // docs/benchmarks.md), each node by its key (the OFFSET 0 fence keeps the lateral lookup: on a
      // misestimate the planner hashed the hits against a scan of all of `nodes`). Every term is then checked
      // on those rows when there are several (a name branch's other terms may be in the text), and the exclusions.
      const terms = long.map((_, i) => (i === 0 ? '@like' : `@l${i}`));
      const has = (col: string, p: string) => `${col} ILIKE ${p} ESCAPE '\\'`;
      const lacks = (col: string, ps: string[]) => ps.map((p) => `${col} NOT ILIKE ${p} ESCAPE '\\'`);
      const byName = terms.map(
        (p, i) => `SELECT * FROM nodes WHERE tenant_id IN (${tids}) AND ${[has('name', p), ...lacks('name', terms.slice(0, i))].join(' AND ')}`,
      );
      const inText = terms.map((p) => `(${has('f.body', p)} OR ${has('f.meta', p)})`);
      const byText = `SELECT b.* FROM search_fts f CROSS JOIN LATERAL (SELECT * FROM nodes WHERE tenant_id IN (${tids}) AND id = f.rowid OFFSET 0) b WHERE ${[...inText, ...lacks('b.name', terms)].join(' AND ')}`;
      if (long.length) nodes = `(${[...byName, byText].join(' UNION ALL ')}) n`;
      long.forEach((t, i) => {
        args[i === 0 ? 'like' : `l${i}`] = like(t);
        if (long.length > 1) where.push(`(${inNameOrText(terms[i])})`);
      });
      query.none.forEach((t, i) => {
        args[`x${i}`] = like(t);
        where.push(t.length >= 3 ? `NOT (${inNameOrText(`@x${i}`)})` : `n.name NOT ILIKE @x${i} ESCAPE '\\'`);
      });
      return nodes;
    }
    // FTS5 over both columns: every term in the name or the body, no excluded one in either.
    const phrase = (t: string) => `"${t.replace(/"/g, '""')}"`;
    const none = longNot.length ? `(${longNot.map(phrase).join(' OR ')})` : '';
    if (long.length) {
      where.push('n.id IN (SELECT rowid FROM search_fts WHERE search_fts MATCH @q)');
      args.q = `(${long.map(phrase).join(' AND ')})${none && ` NOT ${none}`}`;
    } else if (none) {
      where.push('n.id NOT IN (SELECT rowid FROM search_fts WHERE search_fts MATCH @qx)');
      args.qx = none;
    }
    query.none.forEach((t, i) => {
      if (t.length < 3) where.push(`n.name NOT LIKE @x${i} ESCAPE '\\'`), (args[`x${i}`] = like(t));
    });
    return nodes;
  }
}

/**
 * The search's one statement: the match runs once; the window count is taken over every hit before the LIMIT.
 * The hits carry only their sort key (all SQLite's index on them holds), and the page's rows alone are read
 * whole from `nodes`, for their entry JSON: SQLite made the JSON of every hit when the sorted subquery built it.
 */
export function searchSql(dialect: Db['dialect'], from: string, locks: boolean): string {
  const keys = 'n.id AS h_id, n.type AS h_type, n.sort_key AS h_key, lv.lv_perm AS h_perm, lv.lv_name AS h_storage, count(*) OVER () AS h_total';
  const hits = from.replace('%COLS%', keys).replace('%JOIN%', '');
  const entry = entryJsonSql(dialect, locks).replace(/@perm/g, 'h.h_perm');
  return `SELECT ${entry}, h.h_storage, n.path, n.id, h.h_total FROM (${hits} ORDER BY n.type, n.sort_key, n.id LIMIT @limit) h
  JOIN nodes n ON n.id = h.h_id${locks ? lockJoin('n') : ''} ORDER BY h.h_type, h.h_key, h.h_id`;
}

/** PostgreSQL: the term (a parameter) in the row's name or in its stored text or metadata. */
const inNameOrText = (p: string) =>
  `n.name ILIKE ${p} ESCAPE '\\' OR EXISTS (SELECT 1 FROM search_fts t WHERE t.rowid = n.id AND (t.body ILIKE ${p} ESCAPE '\\' OR t.meta ILIKE ${p} ESCAPE '\\'))`;
