/**
 * Search over the catalogue: substring match on names and on the stored text
 * of files (small text files from the write gate, documents from the text
 * extraction: server/fulltext; FTS5 trigram on SQLite, pg_trgm on
 * PostgreSQL; queries under 3 characters fall back to a name scan), on the
 * metadata text of photos, audio and video (`search_fts.meta`), filters, and
 * only storages the caller may read. Answers in the listing shape, each entry
 * with its full `path`, `match` (`name`, `content`, or `metadata`: a hit in
 * the metadata text, or a filter-only search) and, for a content or metadata
 * hit, a `snippet` of the text around it (snippet.ts).
 */
import { escapeLike, type Db } from '../db';
import type { ActorFiles } from './actor-files';
import { AppError } from '../errors';
import { uiPath } from '../lib/paths';
import { entryJsonSql, lockJoin, stampThumbs } from './entry';
import { confinement } from './access';
import { TextExtractsRepo, type EncryptedRoots, type TextWindow } from '../catalogue';
import { queryPattern, snippetOf, WINDOW_BEFORE, WINDOW_SPAN } from './snippet';
import { MAX_TERMS, parseQuery, type SearchQuery } from './search-query';

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
  /** Taken (a photo) or recorded (audio, video) at or after, at or before (epoch ms): files without the date are left out. */
  taken_from?: number;
  taken_to?: number;
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

  /**
   * `anyLocks()`: whether any storage may hold app locks (results then join them; FileLocks.anyAtAll);
   * `roots`: encrypted folders, whose insides never appear in results (their names are ciphertext).
   */
  constructor(
    private db: Db,
    private stamp?: (id: number) => string,
    private anyLocks: () => boolean = () => false,
    private roots?: EncryptedRoots,
  ) {
    this.texts = new TextExtractsRepo(db);
  }

  /**
   * Matching entries, folders first then natural name order; `not_found` for a scope the caller cannot see.
   * The page and its total come from one statement (searchSql) on both databases; PostgreSQL runs it on the
   * async reader, so the event loop serves other requests during the round trip.
   */
  async search(fa: ActorFiles, s: SearchInput): Promise<SearchResult> {
    const plan = this.plan(fa, s);
    if (!('from' in plan)) return plan.empty;
    const { empty, from, args } = plan;
    const { rows, total } = await paged(this.db, from, args, s.limit, this.anyLocks());
    const extra = await this.matches(rows, s.q.trim());
    const entriesJson =
      '[' + rows.map(([json, storage, path], i) => `${json.slice(0, -1)},"path":${JSON.stringify(uiPath(storage, path))}${extra[i]}}`).join(',') + ']';
    return { ...empty, entriesJson: stampThumbs(entriesJson, this.stamp), total };
  }

  /**
   * Each row's `match` and, for content matches, `snippet` (as JSON members to append). A row whose name
   * holds every term matched by name (the databases' case folding is close to JavaScript's `iu`); the others
   * by their text, the snippet around the first (longest) term their name lacks: `content` when the body holds
   * it, `metadata` when only the metadata text does. The windows around the hits come in one read per such
   * term for the page.
   */
  private async matches(rows: Row[], q: string): Promise<string[]> {
    const terms = parseQuery(q).all;
    if (terms.length === 0) return rows.map(() => ',"match":"metadata"');
    const patterns = terms.map((t) => [t, queryPattern(t)] as const);
    const byTerm = new Map<string, number[]>();
    const termOf = new Map<number, string>();
    for (const [, , path, id] of rows) {
      const name = path.slice(path.lastIndexOf('/') + 1);
      const missing = patterns.find(([t, re]) => t.length >= 3 && !re.test(name));
      if (!missing) continue;
      termOf.set(Number(id), missing[0]);
      byTerm.set(missing[0], [...(byTerm.get(missing[0]) ?? []), Number(id)]);
    }
    const windows = new Map<number, TextWindow>();
    for (const [t, ids] of byTerm) for (const [id, w] of await this.texts.windows(ids, t, WINDOW_BEFORE, WINDOW_SPAN)) windows.set(id, w);
    return rows.map((r) => {
      const id = Number(r[3]);
      const term = termOf.get(id);
      if (term === undefined) return ',"match":"name"';
      const w = windows.get(id);
      if (w === undefined) return ',"match":"content"';
      return `,"match":${w.in === 'meta' ? '"metadata"' : '"content"'},"snippet":${JSON.stringify(snippetOf(w.text, term, terms))}`;
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
    const query = parseQuery(s.q);
    if (query.all.length + query.none.length > MAX_TERMS)
      throw new AppError('validation_failed', { field: 'q', reason: `at most ${MAX_TERMS} words and phrases` }, { field: 'q' });
    const nodes = this.matchTerms(query, where, args);
    const terms = where.length;
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
      where.push(`n.id IN (SELECT node_id FROM text_extracts WHERE ${taken.join(' AND ')})`);
    }
    // Exclusions alone do not make a search: they narrow one.
    if (query.all.length === 0 && where.length === terms)
      throw new AppError('validation_failed', { field: 'q', reason: 'a query or a filter is required' }, { field: 'q' });

    // Encrypted folders and what is inside are the browser's to search (it holds the names): never a server result.
    let e = 0;
    for (const x of storages)
      for (const r of this.roots?.below(x.id, '') ?? []) {
        where.push(`NOT (n.storage_id = @es${e} AND (n.path = @er${e} OR (n.path >= @ea${e} AND n.path < @eb${e})))`);
        Object.assign(args, { [`es${e}`]: r.storage_id, [`er${e}`]: r.rel, [`ea${e}`]: r.rel + '/', [`eb${e}`]: r.rel + '0' });
        e++;
      }
    // The caller's storages and levels as a VALUES table, so perm and the storage name come from one join.
    // Typed: a VALUES row of bare parameters is text on PostgreSQL.
    const lv = storages.map((x, i) => `(CAST(@sid${i} AS BIGINT), CAST(@perm${i} AS TEXT), CAST(@sname${i} AS TEXT))`).join(',');
    storages.forEach((x, i) => Object.assign(args, { [`sid${i}`]: x.id, [`perm${i}`]: x.level, [`sname${i}`]: x.name }));
    // SQLite with a text match: the FTS hits must drive (rowid lookups); offered the storage's index, the planner
    // walked every node of the storage against the hit list (280 ms of CPU a search at 1,000,000 files, against
    // ~1 ms; docs/benchmarks.md). The unary + keeps the join off that index.
    const sid = this.db.dialect !== 'postgres' && 'q' in args ? '+n.storage_id' : 'n.storage_id';
    const from = `WITH lv(lv_sid, lv_perm, lv_name) AS (VALUES ${lv}) SELECT %COLS% FROM ${nodes} JOIN lv ON lv.lv_sid = ${sid}%JOIN% WHERE ${where.join(' AND ')}`;
    return { empty, from, args };
  }

  /**
   * The query's terms as SQL: pushes their clauses on `where` and answers the row source. Terms of 3 characters or more are matched in
   * the name or the stored text on the trigram indexes; shorter ones in names only (no index serves them).
   */
  private matchTerms(query: SearchQuery, where: string[], args: Record<string, unknown>): string {
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
      // Substring search on pg_trgm GIN indexes: case-free, like FTS5's trigram phrase. The first (longest)
      // term picks the rows: names on `nodes` itself (nodes_name_trgm), texts and metadata from search_fts, each node by its
      // key (the OFFSET 0 fence keeps the lateral lookup: on a misestimate the planner hashed the hits against
      // a scan of all of `nodes`), minus name hits. Further terms and exclusions are checked on those rows.
      const m = "ILIKE @like ESCAPE '\\'";
      if (long.length)
        nodes = `(SELECT * FROM nodes WHERE name ${m} UNION ALL SELECT b.* FROM search_fts f CROSS JOIN LATERAL (SELECT * FROM nodes WHERE id = f.rowid OFFSET 0) b WHERE (f.body ${m} OR f.meta ${m}) AND b.name NOT ${m}) n`;
      long.forEach((t, i) => {
        args[i === 0 ? 'like' : `l${i}`] = like(t);
        if (i > 0) where.push(`(${inNameOrText(`@l${i}`)})`);
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

/** A result row: the entry's JSON, the storage's name, the path in it, the node's id. */
type Row = [string, string, string, number];

/**
 * The search's one statement: the match runs once; the window count is taken over every hit before the LIMIT,
 * and the entry JSON is built only for the page's rows, from the rows the hits carry (no second lookup). Built
 * in the sorted subquery, SQLite made the JSON of every hit before its sort kept a page of them.
 */
export function searchSql(dialect: Db['dialect'], from: string, locks: boolean): string {
  const hits = from.replace('%COLS%', 'n.*, lv.lv_perm AS h_perm, lv.lv_name AS h_storage, count(*) OVER () AS h_total').replace('%JOIN%', '');
  const entry = entryJsonSql(dialect, locks).replace(/@perm/g, 'n.h_perm');
  return `SELECT ${entry}, n.h_storage, n.path, n.id, n.h_total FROM (${hits} ORDER BY n.type, n.sort_key, n.id LIMIT @limit) n${locks ? lockJoin('n') : ''}
  ORDER BY n.type, n.sort_key, n.id`;
}

/** PostgreSQL: the term (a parameter) in the row's name or in its stored text or metadata. */
const inNameOrText = (p: string) =>
  `n.name ILIKE ${p} ESCAPE '\\' OR EXISTS (SELECT 1 FROM search_fts t WHERE t.rowid = n.id AND (t.body ILIKE ${p} ESCAPE '\\' OR t.meta ILIKE ${p} ESCAPE '\\'))`;

async function paged(db: Db, from: string, args: Record<string, unknown>, limit: number, locks: boolean): Promise<{ rows: Row[]; total: number }> {
  const got = await db.async.sql<[string, string, string, number, number]>(searchSql(db.dialect, from, locks), { ...args, limit }, { raw: true });
  // A page of at least one row holds the total; no row means no hit (the limit is at least 1).
  return { rows: got.map(([json, storage, path, id]) => [json, storage, path, id]), total: Number(got[0]?.[4] ?? 0) };
}
