/**
 * Folder listings from the catalogue. A listed folder is revalidated in the
 * background (changes arrive as realtime frames); only a folder the catalogue
 * has never seen waits briefly for its first look. `/` lists the caller's
 * storages. Pages come as pre-serialised JSON (see ListingRepo), cached until
 * the folder changes (see PageCache).
 */
import { etagOf, presentNode, stampThumbs } from './entry';
import type { Catalogue, Level, NodeRow, StorageRow } from '../catalogue';
import type { Entry } from '../storage';
import type { ActorFiles } from './actor-files';
import { AppError } from '../errors';
import { baseName, joinRel, parentRel, uiPath } from '../lib/paths';
import type { FileEntry } from '../contract';
import { ListingRepo, type FolderProbe, type Keyset, type SortField } from './listing.repo';
import type { PageSeek } from './folder-index';
import { PageCache } from './page-cache';
import { CompressedPages, type PageEncoding } from './compressed-pages';
import { isoOf } from './entry';
import type { Place } from './access';

export interface ListInput {
  path: string;
  sort: SortField;
  dir: 'asc' | 'desc';
  limit: number;
  offset: number;
  cursor?: string;
}

/** A listing whose `entries` are already JSON text; `listingJson` assembles the body. */
export interface Listing {
  path: string;
  entriesJson: string;
  total: number;
  /** `offline`: the backend cannot be reached right now; the rows come from the catalogue. */
  storage: { name: string; driver: string; readonly: boolean; offline: boolean };
  next_cursor: string | null;
}

/** How long a listing of a never-seen folder waits for its first revalidation (the UI hears the rest as realtime frames). */
const FIRST_LOOK_MS = 300;
/**
 * `entries` waits longer, and for any folder not yet listed whole (no child in the catalogue, or children
 * only from a deeper folder's check before the storage's first sync ended): gateways and the assistant
 * have no realtime channel, and a client shown a partial folder caches it. A checked folder stays fresh,
 * so a really empty one costs one look.
 */
const ENTRIES_FIRST_LOOK_MS = 15_000;
/** Folder probes kept in memory (see `probe`); past it they are all forgotten (one Map, like the syncer's checks). */
const MAX_PROBES = 10_000;
/** Cached pages carry signed thumbnail URLs: re-sign at least hourly (stamps live a day). */
const STAMP_EPOCH_MS = 3_600_000;

/**
 * A listing response body: one buffer, or pieces to send back to back (an indexed page's entries are a
 * slice of its folder's index: copying them into one buffer per request was the main allocation of a
 * listing under load); `encoding` when it is a compressed copy (its Content-Encoding).
 */
export interface ListingBody {
  body: Buffer | Buffer[];
  encoding?: PageEncoding;
}

export class ListingService {
  private cache = new PageCache<{ body: Buffer; bytes: number }>();
  private compressed = new CompressedPages();
  /** Known folders' probes, by storage and folder, with the generations they were read at (see `probe`). */
  private probes = new Map<string, { stamp: string; probe: FolderProbe }>();

  /** `stamp` signs thumbnail URLs (from the thumbnails module); without it `thumb_url` stays a bare path. */
  constructor(
    private cat: Catalogue,
    private repo: ListingRepo,
    private stamp?: (id: number) => string,
  ) {}

  /** Feeds the page cache: call for every `folder.changed` event (removals and moves are structural). */
  folderChanged(storageId: number, folder: string, kind: string): void {
    this.cache.changed(storageId, folder, kind === 'deleted' || kind === 'moved');
    this.compressed.changed(storageId, folder, kind === 'deleted' || kind === 'moved');
    this.repo.indexes.changed(storageId, folder, kind === 'deleted' || kind === 'moved');
  }

  /** Forgets every cached page and index (change notices from other instances may have been missed). */
  resync(): void {
    this.cache.clear();
    this.compressed.clear();
    this.repo.indexes.clear();
    this.probes.clear();
  }

  /**
   * The response body (listing JSON, a buffer or its pieces) of a page of the folder at `path`,
   * the page's compressed copy in `encoding` (the best the client accepts) once one was made (see CompressedPages);
   * `not_found` for a missing or hidden path, `forbidden` without access.
   */
  async list(fa: ActorFiles, input: ListInput, encoding?: PageEncoding): Promise<ListingBody> {
    const plain = (body: Buffer | Buffer[]): ListingBody => ({ body });
    if (input.path.replace(/^\/+/, '') === '') return plain(Buffer.from(listingJson(this.storages(fa, input))));
    const { storage, rel, level, passage, passages } = await this.folder(fa, input.path);
    const marks = this.encryptedMarks(storage.id, rel);
    if (passage !== undefined) {
      const l = await this.passage(storage, rel, passages ?? [passage]);
      return plain(Buffer.from(listingJson(marks ? { ...l, entriesJson: marks(l.entriesJson) } : l)));
    }
    const desc = input.dir === 'desc';
    const after = input.cursor ? decodeCursor(input.cursor, input.sort, desc) : undefined;
    const shown = {
      path: uiPath(storage.name, rel),
      storage: {
        name: storage.name,
        driver: storage.driver,
        readonly: !!storage.read_only || storage.status === 'offline',
        offline: storage.status === 'offline',
      },
    };
    const epoch = Math.floor(Date.now() / STAMP_EPOCH_MS);
    const key = JSON.stringify([
      storage.id,
      rel,
      input.sort,
      desc,
      input.limit,
      after ? input.cursor : input.offset,
      level,
      storage.name,
      storage.driver,
      storage.read_only,
      storage.status,
      epoch,
    ]);
    /**
     * The page from the catalogue (no index, no cache) as listing JSON, its entries' JSON passed through
     * `entries`; from `seek` when the folder's index gave one (folder-index.ts: a big folder's count and start).
     */
    const pageJson = async (
      entries: (json: string) => string,
      seek: Omit<PageSeek, 'total'> & { total?: number } = { offset: after ? 0 : input.offset, after },
    ) => {
      const page = await this.repo.page({
        storageId: storage.id,
        tenantId: storage.tenant_id,
        dir: rel,
        sort: input.sort,
        desc,
        limit: input.limit,
        perm: level,
        ...seek,
      });
      const more = page.last && page.count === input.limit && (after ? true : input.offset + page.count < page.total);
      const next_cursor = more ? encodeCursor(input.sort, desc, page.last!) : null;
      return Buffer.from(listingJson({ ...shown, entriesJson: entries(stampThumbs(page.json, this.stamp)), total: page.total, next_cursor }));
    };
    // Pages holding encrypted rows are marked per request, never cached (membership may change; such folders are few).
    if (marks) return plain(await pageJson(marks));
    if (encoding) {
      const copy = this.compressed.get(storage.id, rel, key, encoding);
      if (copy) return { body: copy, encoding };
    }
    const ix = await this.repo.indexes.page({
      storageId: storage.id,
      tenantId: storage.tenant_id,
      dir: rel,
      sort: input.sort,
      desc,
      limit: input.limit,
      offset: input.offset,
      after,
      perm: level,
      stamp: this.stamp,
      stampEpoch: epoch,
    });
    if (ix && 'entries' in ix) {
      const pieces = listingPieces({ ...shown, total: ix.total, next_cursor: ix.next && encodeCursor(input.sort, desc, ix.next) }, ix.entries);
      if (encoding) this.compressed.offer(storage.id, rel, key, encoding, pieces);
      return plain(pieces);
    }
    const hit = this.cache.get(storage.id, rel, key);
    if (hit) {
      if (encoding) this.compressed.offer(storage.id, rel, key, encoding, hit.body);
      return plain(hit.body);
    }
    // A change landing while the page is read leaves it stale: then it is served but neither cached nor compressed.
    const stamp = this.cache.stampOf(storage.id, rel);
    const body = await pageJson((json) => json, ix ?? undefined);
    if (this.cache.stampOf(storage.id, rel) !== stamp) return plain(body);
    this.cache.set(storage.id, rel, key, { body, bytes: body.length }, stamp);
    if (encoding) this.compressed.offer(storage.id, rel, key, encoding, body);
    return plain(body);
  }

  /**
   * Every entry of the folder at `path` (not `/`), from the catalogue in name
   * order, a page at a time so a 100,000-entry folder streams: for gateways
   * (WebDAV PROPFIND, SFTP readdir, FTP LIST, S3 ListObjects). Same access
   * and first-look revalidation as `list`; a folder on the way down to a
   * key's root yields only the next folder on the way. Each entry carries its
   * catalogue node id (NFS file handles), so no door looks it up again.
   */
  async *entries(fa: ActorFiles, path: string | Place, pageSize = 1000): AsyncGenerator<ListedEntry> {
    const { storage, rel, passage, passages } = await this.folder(fa, path, true);
    if (passage !== undefined) {
      for (const child of await this.cat.nodes.getMany(
        storage,
        (passages ?? [passage]).map((name) => joinRel(rel, name)),
      ))
        if (child && !child.deleted_at && child.type === 'dir') yield entryOf(child);
      return;
    }
    let after: { type: string; key: string; id: number } | undefined;
    // A door that does not see encrypted folders (gateways by default, the assistant) gets no row of one.
    const hide = fa.encrypted !== 'members' && fa.encrypted !== 'read' && this.cat.roots.any(storage.id);
    for (;;) {
      const { rows } = await this.cat.nodes.list(storage, rel, { sort: 'name', desc: false, limit: pageSize, offset: 0, after });
      for (const r of rows) if (!hide || !this.cat.roots.rootOf(storage.id, r.path)) yield entryOf(r);
      if (rows.length < pageSize) return;
      const last = rows[rows.length - 1];
      after = { type: last.type, key: last.sort_key, id: last.id };
    }
  }

  /**
   * Resolves a folder for listing (a folder on the way down to a key's root
   * too) and revalidates it in the background; only a folder the catalogue
   * has never seen waits for its first look (`entries`: one not yet listed
   * whole). A file or a missing folder → `not_found`.
   */
  private async folder(fa: ActorFiles, path: string | Place, entries = false) {
    const t = fa.target(path, 'viewer', { passage: true });
    const { storage, rel } = t;
    let probe = await this.probe(storage, rel);
    const whole = probe.type === 'file' || (probe.filled && this.cat.syncer.listed(storage.id, rel));
    const wait = entries ? (whole ? 0 : ENTRIES_FIRST_LOOK_MS) : probe.known ? 0 : FIRST_LOOK_MS;
    await this.cat.syncer.revalidate(storage.id, rel, wait).catch(() => undefined);
    if (rel !== '' && t.passage === undefined) {
      // A folder seen for the first time may have been catalogued by the wait above.
      if (!probe.known) probe = await this.repo.probe(storage, rel);
      const shown = typeof path === 'string' ? path : uiPath(storage.name, rel);
      if (probe.type === null) await mustBeFolder(fa, { storage_id: storage.id, rel }, shown);
      else if (probe.type !== 'dir') throw new AppError('not_found', { path: shown }, { reason: 'not a folder' });
    }
    return t;
  }

  /**
   * The folder's probe (ListingRepo.probe: a query per listing, 2.5 % of a listing's CPU under load), from
   * memory while neither the folder's generation nor its parent's changed since it was read: its own row
   * is a row of its parent's listing and its children are its own, so every write that can change the
   * answer bumps one of the two (a removal or move bumps the whole storage's; see PageCache). A folder the
   * catalogue does not know is asked each time (its first look may catalogue it meanwhile).
   */
  private async probe(storage: StorageRow, rel: string): Promise<FolderProbe> {
    // The uid too: a storage removed and added again may get the same id (its rows went with it).
    const key = `${storage.id}:${storage.uid}:${rel}`;
    // Taken before the query: a change landing while it runs leaves the answer stale, never served again.
    const stamp = `${this.cache.stampOf(storage.id, rel)}/${this.cache.stampOf(storage.id, parentRel(rel))}`;
    const hit = this.probes.get(key);
    if (hit?.stamp === stamp) return hit.probe;
    const probe = await this.repo.probe(storage, rel);
    if (probe.known) {
      if (this.probes.size >= MAX_PROBES) this.probes.clear();
      this.probes.set(key, { stamp, probe });
    }
    return probe;
  }

  /**
   * For a folder inside an encrypted folder, or holding encrypted roots: what marks its rows (`encrypted`, and
   * `vault_folder_id` on a root). Null for every other folder (one Map lookup where no encrypted folder is).
   */
  private encryptedMarks(storageId: number, rel: string): ((json: string) => string) | null {
    if (!this.cat.roots.any(storageId)) return null;
    const inside = this.cat.roots.rootOf(storageId, rel);
    const roots = new Map(this.cat.roots.below(storageId, rel).flatMap((r) => (r.rel !== rel && parentRel(r.rel) === rel ? [[baseName(r.rel), r.id]] : [])));
    if (!inside && !roots.size) return null;
    return (json) =>
      JSON.stringify(
        (JSON.parse(json) as FileEntry[]).map((e) => {
          const id = roots.get(e.name);
          return inside || id !== undefined ? { ...e, encrypted: true, ...(id !== undefined && { vault_folder_id: id }) } : e;
        }),
      );
  }

  /** A folder on the way down to a key's root or granted folders: only the next folders on the way (that exist). */
  private async passage(storage: StorageRow, rel: string, next: string[]): Promise<Listing> {
    const children = await this.cat.nodes.getMany(
      storage,
      next.map((name) => joinRel(rel, name)),
    );
    const rows = children.flatMap((child) => (child && !child.deleted_at && child.type === 'dir' ? [presentNode(child, 'viewer')] : []));
    return {
      path: uiPath(storage.name, rel),
      entriesJson: JSON.stringify(rows),
      total: rows.length,
      storage: { name: storage.name, driver: storage.driver, readonly: true, offline: storage.status === 'offline' },
      next_cursor: null,
    };
  }

  /** The root: one folder entry per storage the caller can open. */
  private storages(fa: ActorFiles, input: ListInput): Listing {
    const rows = fa.visible().map(({ storage: s, level }) => ({
      id: s.id,
      name: s.name,
      type: 'dir' as const,
      size: 0,
      modified: isoOf(Date.parse(s.updated_at) || 0),
      is_image: false,
      is_video: false,
      thumb_url: '',
      locked: false,
      lock: null,
      app_state: [],
      perm: level as Level,
    }));
    const cmp = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });
    rows.sort((a, b) => cmp.compare(a.name, b.name) * (input.dir === 'desc' ? -1 : 1));
    return {
      path: '/',
      entriesJson: JSON.stringify(rows.slice(input.offset, input.offset + input.limit)),
      total: rows.length,
      storage: { name: '', driver: '', readonly: true, offline: false },
      next_cursor: null,
    };
  }
}

/** A folder entry from the catalogue: the backend's fields and the node's id. */
export type ListedEntry = Entry & { id: number };

/** A catalogue row as a storage entry (what gateways list). */
function entryOf(n: NodeRow): ListedEntry {
  return n.type === 'dir'
    ? { id: n.id, name: n.name, type: 'dir', size: 0, mtime: n.mtime }
    : { id: n.id, name: n.name, type: 'file', size: n.size, mtime: n.mtime, etag: etagOf(n.size, n.mtime, n.etag), mime: n.mime ?? undefined };
}

/** A folder the catalogue does not know (yet): ask the backend before answering 404. */
async function mustBeFolder(fa: ActorFiles, place: Place, shown: string): Promise<void> {
  const e = await fa.stat(place).catch((err) => {
    if (err instanceof AppError && err.code === 'not_found') throw new AppError('not_found', { path: shown });
    throw err;
  });
  if (e.type !== 'dir') throw new AppError('not_found', { path: shown }, { reason: 'not a folder' });
}

/** The response body, concatenated so the entries are never parsed again. */
export function listingJson(l: Listing): string {
  return `{"path":${JSON.stringify(l.path)},"entries":${l.entriesJson},"total":${l.total},"storage":${JSON.stringify(l.storage)},"next_cursor":${JSON.stringify(l.next_cursor)}}`;
}

/** The same body as byte pieces: an indexed page's entries are slices of its folder's index. */
function listingPieces(l: Omit<Listing, 'entriesJson'>, entries: Buffer[]): Buffer[] {
  return [
    Buffer.from(`{"path":${JSON.stringify(l.path)},"entries":`),
    ...entries,
    Buffer.from(`,"total":${l.total},"storage":${JSON.stringify(l.storage)},"next_cursor":${JSON.stringify(l.next_cursor)}}`),
  ];
}

/** Opaque cursor: base64url of the sort it belongs to and the last row's keys. */
function encodeCursor(sort: SortField, desc: boolean, k: Keyset): string {
  return Buffer.from(JSON.stringify([sort, desc ? 1 : 0, k.type, k.value, k.key, k.id])).toString('base64url');
}

function decodeCursor(raw: string, sort: SortField, desc: boolean): Keyset {
  const bad = () => new AppError('validation_failed', { field: 'cursor', reason: 'unknown or stale cursor' }, { field: 'cursor' });
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  if (!Array.isArray(v) || v.length !== 6) throw bad();
  const [s, d, type, value, key, id] = v;
  if (
    s !== sort ||
    d !== (desc ? 1 : 0) ||
    (type !== 'dir' && type !== 'file') ||
    typeof value !== 'number' ||
    typeof key !== 'string' ||
    !Number.isSafeInteger(id)
  )
    throw bad();
  return { type, value, key, id };
}
