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
import type { Db } from '../db';
import type { ActorFiles } from './actor-files';
import { AppError } from '../errors';
import { uiPath } from '../lib/paths';
import { stampThumbs } from './entry';
import { SearchRepo, type SearchFilters, type SearchRow, type SearchScope } from './search.repo';
import { confinement } from './access';
import { TextExtractsRepo, type EncryptedRoots, type TextWindow } from '../catalogue';
import { queryPattern, snippetOf, WINDOW_BEFORE, WINDOW_SPAN } from './snippet';
import { MAX_TERMS, parseQuery, type SearchQuery } from './search-query';

export interface SearchInput extends SearchFilters {
  q: string;
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
  private repo: SearchRepo;

  /**
   * `anyLocks()`: whether any storage may hold app locks (results then join them; FileLocks.anyAtAll);
   * `roots`: encrypted folders, whose insides never appear in results (their names are ciphertext).
   */
  constructor(
    db: Db,
    private stamp?: (id: number) => string,
    private anyLocks: () => boolean = () => false,
    private roots?: EncryptedRoots,
  ) {
    this.texts = new TextExtractsRepo(db);
    this.repo = new SearchRepo(db);
  }

  /** Matching entries, folders first then natural name order; `not_found` for a scope the caller cannot see. */
  async search(fa: ActorFiles, s: SearchInput): Promise<SearchResult> {
    const plan = this.plan(fa, s);
    if (!('scope' in plan)) return plan.empty;
    const { empty, query, scope } = plan;
    const { rows, total } = await this.repo.page(query, s, scope, s.limit, this.anyLocks());
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
  private async matches(rows: SearchRow[], q: string): Promise<string[]> {
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

  /** The caller's scope and the parsed query, or the empty answer; `validation_failed` for a query that is not one. */
  private plan(fa: ActorFiles, s: SearchInput): { empty: SearchResult } | { empty: SearchResult; query: SearchQuery; scope: SearchScope } {
    const seen = fa.visible();
    // A storage passed through on the way to granted folders (a home) is searched only inside them: when it is
    // the one storage in sight with one such folder, or the scope lies inside one (below). Never the rest of it.
    const home = seen.length === 1 && seen[0].through?.length === 1 ? { storage_id: seen[0].storage.id, rel: seen[0].through[0] } : null;
    let storages = seen
      .filter((x) => !x.through || home)
      .map(({ storage, level }) => ({
        id: storage.id,
        tenant_id: storage.tenant_id,
        name: storage.name,
        driver: storage.driver,
        ro: !!storage.read_only,
        level,
      }));
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
      if (inHome)
        storages = [
          { id: r.storage.id, tenant_id: r.storage.tenant_id, name: r.storage.name, driver: r.storage.driver, ro: !!r.storage.read_only, level: r.level },
        ];
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

    const query = parseQuery(s.q);
    if (query.all.length + query.none.length > MAX_TERMS)
      throw new AppError('validation_failed', { field: 'q', reason: `at most ${MAX_TERMS} words and phrases` }, { field: 'q' });
    // Exclusions alone do not make a search: they narrow one (a scope or a filter does make one).
    const filtered =
      !!prefix || !!s.type || !!s.ext?.length || [s.min_size, s.max_size, s.after, s.before, s.taken_from, s.taken_to].some((x) => x !== undefined);
    if (query.all.length === 0 && !filtered) throw new AppError('validation_failed', { field: 'q', reason: 'a query or a filter is required' }, { field: 'q' });
    // Encrypted folders and what is inside are the browser's to search (it holds the names): never a server result.
    const excluded = storages.flatMap((x) => (this.roots?.below(x.id, '') ?? []).map((r) => ({ storage_id: r.storage_id, rel: r.rel })));
    return { empty, query, scope: { storages: storages.map(({ id, tenant_id, name, level }) => ({ id, tenant_id, name, level })), prefix, excluded } };
  }
}
