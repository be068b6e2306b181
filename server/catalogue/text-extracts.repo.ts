/**
 * Text extraction for search (`text_extracts`, the text in `search_fts.body` and a photo's or a recording's
 * metadata in `search_fts.meta`, its date taken in `text_extracts.taken`): which file version was
 * extracted, is waiting, or failed and why. The extraction module (server/fulltext) drives it; this
 * repository is the only writer of both. A row describes one size/mtime of its node: asking again for the
 * same version changes nothing (nothing is extracted twice), a new version goes back to `pending`, and a
 * rename or move keeps the row (its key is the node id).
 */
import { sql } from 'kysely';
import { isForeignKeyViolation, type Db, type TenantScope } from '../db';
import type { StorageRef } from './storage-ref';
import type { Selectable } from 'kysely';
import type { TextExtractsTable } from '../db/tables';

export type ExtractState = TextExtractsTable['state'];

/** A waiting file with what the extractor needs of its node (`deleted_at` set, or no path: the node is gone). */
export interface PendingText {
  id: number;
  /** Its storage's tenant: the row's, and the node's (docs/tenants.md). */
  tenant_id: number;
  storage_id: number;
  path: string;
  name: string;
  size: number;
  mtime: number;
  mime: string | null;
  deleted_at: string | null;
}

export interface ExtractOutcome {
  state: Exclude<ExtractState, 'pending'>;
  reason: string | null;
  /** The text to store (null: none; a failure clears the text of an older version). */
  text: string | null;
  capped: boolean;
  /** The metadata text to store beside it (none: cleared like the text). */
  meta?: string | null;
  /** The date taken (epoch ms; none: cleared). */
  taken?: number | null;
}

/** Where a search term was found in a file's stored text: a window of the body, else of the metadata. */
export interface TextWindow {
  in: 'body' | 'meta';
  text: string;
}

/** One storage's extraction state (Admin → Status). */
export interface StorageTextStatus {
  storage_id: number;
  pending: number;
  done: number;
  failed: number;
  skipped: number;
  /** The newest failures, newest first. */
  failures: Array<{ path: string; reason: string; at: string }>;
}

/** Ids per statement: far below either database's bound on parameters. */
const CHUNK = 500;
const lit = <T extends string>(v: T) => sql.lit(v);
const ids = (tenants: TenantScope[]) => tenants.map((t) => t.tenant_id);

export class TextExtractsRepo {
  constructor(private db: Db) {}

  /**
   * Sends each file version to `pending` unless its row already describes that size and mtime (whatever
   * its state). One unit, 500 files a statement; resolves with the ids that moved. The files are of storage `s`,
   * and a row carries its tenant. A file whose node is gone by then (deleted after the write or sync that named
   * it), or is another tenant's, is left out: there is nothing to extract.
   */
  async markPending(s: StorageRef, files: Array<{ id: number; size: number; mtime: number }>): Promise<number[]> {
    try {
      return await this.markPendingOnce(s, files);
    } catch (e) {
      // A node deleted between the unit's look and its insert (PostgreSQL, another connection): once more without it.
      if (isForeignKeyViolation(e)) return this.markPendingOnce(s, files);
      throw e;
    }
  }

  private markPendingOnce(s: StorageRef, files: Array<{ id: number; size: number; mtime: number }>): Promise<number[]> {
    const k = this.db.k;
    const now = new Date().toISOString();
    const parts: (typeof files)[] = [];
    for (let i = 0; i < files.length; i += CHUNK) parts.push(files.slice(i, i + CHUNK));
    return this.db.async.unit(function* (t) {
      const moved: number[] = [];
      for (const all of parts) {
        const live = new Set(
          (yield* t.all(
            k
              .selectFrom('nodes')
              .select('id')
              .where('tenant_id', '=', s.tenant_id)
              .where(
                'id',
                'in',
                all.map((f) => f.id),
              ),
          )).map((r) => Number(r.id)),
        );
        const part = all.filter((f) => live.has(f.id));
        if (part.length === 0) continue;
        const q = k
          .insertInto('text_extracts')
          .values(
            part.map((f) => ({ tenant_id: s.tenant_id, node_id: f.id, state: 'pending' as const, size: f.size, mtime: Math.round(f.mtime), updated_at: now })),
          )
          .onConflict((oc) =>
            oc
              .column('node_id')
              .doUpdateSet({ state: 'pending', reason: null, size: (eb) => eb.ref('excluded.size'), mtime: (eb) => eb.ref('excluded.mtime'), updated_at: now })
              .where('text_extracts.tenant_id', '=', s.tenant_id)
              .where((eb) => eb.or([eb('text_extracts.size', '!=', eb.ref('excluded.size')), eb('text_extracts.mtime', '!=', eb.ref('excluded.mtime'))])),
          )
          .returning('node_id');
        for (const r of yield* t.all(q)) moved.push(Number(r.node_id));
      }
      return moved;
    });
  }

  /**
   * OCR was turned on for storage `s`: its pictures (by extension, `exts`) wait for reading unless
   * their current version was read already with some text (a photo read for its metadata gave none), and its PDFs whose text layer gave fewer than `belowChars`
   * characters wait again. One unit; resolves with how many files now wait.
   */
  markScansPending(s: StorageRef, exts: string[], belowChars: number): Promise<number> {
    const k = this.db.k;
    const now = new Date().toISOString();
    return this.db.async.unit(function* (t) {
      const pictures = k
        .selectFrom('nodes as n')
        .select((eb) => ['n.tenant_id', 'n.id as node_id', eb.val('pending').as('state'), 'n.size', 'n.mtime', eb.val(now).as('updated_at')])
        .where('n.tenant_id', '=', s.tenant_id)
        .where('n.storage_id', '=', s.id)
        .where('n.type', '=', lit('file'))
        .where('n.deleted_at', 'is', null)
        .where('n.size', '>', 0)
        .where((eb) => eb.or(exts.map((e) => eb(eb.fn('lower', ['n.name']), 'like', `%.${e}`))));
      const a = yield* t.run(
        k
          .insertInto('text_extracts')
          .columns(['tenant_id', 'node_id', 'state', 'size', 'mtime', 'updated_at'])
          .expression(pictures)
          .onConflict((oc) =>
            oc
              .column('node_id')
              .doUpdateSet({ state: 'pending', reason: null, updated_at: now })
              .where('text_extracts.tenant_id', '=', s.tenant_id)
              // Read for its metadata only, or not at all: read again, by OCR this time.
              .where((eb) =>
                eb.or([
                  eb('text_extracts.state', '=', lit('skipped')),
                  eb('text_extracts.state', '=', lit('failed')),
                  eb.and([eb('text_extracts.state', '=', lit('done')), eb('text_extracts.chars', '<', belowChars)]),
                ]),
              ),
          ),
      );
      const b = yield* t.run(
        k
          .updateTable('text_extracts')
          .set({ state: 'pending', reason: null, updated_at: now })
          .where('tenant_id', '=', s.tenant_id)
          .where('state', '=', lit('done'))
          .where('chars', '<', belowChars)
          .where('node_id', 'in', (eb) =>
            eb
              .selectFrom('nodes as n')
              .select('n.id')
              .where('n.tenant_id', '=', s.tenant_id)
              .where('n.storage_id', '=', s.id)
              .where('n.deleted_at', 'is', null)
              .where(sql`lower(n.name)`, 'like', '%.pdf'),
          ),
      );
      return a + b;
    });
  }

  /**
   * Up to `limit` waiting files of the tenants with an id above `afterId`, in id order, with their node's facts;
   * none of the storages in `except` (those waiting on their request budget), though rows whose node is gone
   * still come.
   */
  async pendingAfter(tenants: TenantScope[], afterId: number, limit: number, except: number[] = []): Promise<PendingText[]> {
    if (!tenants.length) return [];
    let q = this.db.k
      .selectFrom('text_extracts as x')
      .leftJoin('nodes as n', 'n.id', 'x.node_id')
      .select(['x.node_id as id', 'x.tenant_id', 'n.storage_id', 'n.path', 'n.name', 'n.size', 'n.mtime', 'n.mime', 'n.deleted_at'])
      .where('x.tenant_id', 'in', ids(tenants))
      .where('x.state', '=', lit('pending'))
      .where('x.node_id', '>', afterId);
    if (except.length) q = q.where((eb) => eb.or([eb('n.storage_id', 'is', null), eb('n.storage_id', 'not in', except)]));
    const rows = await this.db.async.all(q.orderBy('x.node_id').limit(limit));
    return rows.map((r) => ({ ...r, id: Number(r.id), tenant_id: Number(r.tenant_id), size: Number(r.size), mtime: Number(r.mtime) })) as PendingText[];
  }

  /**
   * Records an extraction of the version `seen` (the node's size and mtime when it was read) and stores its
   * text, in one unit, only while the node still is that version: a write during the extraction has sent it
   * back to `pending` (or will), and its text must not be replaced by the older one. Whether it was recorded.
   * `file`: the node's id and its tenant (another tenant's node is not touched).
   */
  finish(file: { id: number; tenant_id: number }, seen: { size: number; mtime: number }, o: ExtractOutcome): Promise<boolean> {
    const k = this.db.k;
    const pg = this.db.dialect === 'postgres';
    const now = new Date().toISOString();
    const { id } = file;
    return this.db.async.unit(function* (t) {
      const node = yield* t.first(k.selectFrom('nodes').select(['name', 'size', 'mtime']).where('tenant_id', '=', file.tenant_id).where('id', '=', id));
      if (!node || Number(node.size) !== seen.size || Number(node.mtime) !== seen.mtime) return false;
      const changed = yield* t.run(
        k
          .updateTable('text_extracts')
          .set({
            state: o.state,
            size: seen.size,
            mtime: seen.mtime,
            reason: o.reason?.slice(0, 1000) ?? null,
            chars: o.text?.length ?? 0,
            capped: o.capped ? 1 : 0,
            taken: o.taken ?? null,
            updated_at: now,
          })
          .where('tenant_id', '=', file.tenant_id)
          .where('node_id', '=', id),
      );
      if (changed !== 1) return false;
      // The name row may not exist yet: a synced node is indexed by name in the background (search-index.ts).
      const stored = { body: o.text, meta: o.meta || null };
      if (pg)
        yield* t.run(
          k
            .insertInto('search_fts')
            .values({ rowid: id, name: node.name, ...stored })
            .onConflict((oc) => oc.column('rowid').doUpdateSet(stored)),
        );
      else if ((yield* t.run(k.updateTable('search_fts').set(stored).where('rowid', '=', id))) === 0)
        yield* t.run(k.insertInto('search_fts').values({ rowid: id, name: node.name, ...stored }));
      return true;
    });
  }

  /** Forgets a waiting row (of its tenant) whose node is gone or no longer a live file. */
  async drop(file: { id: number; tenant_id: number }): Promise<void> {
    await this.db.async.run(this.db.k.deleteFrom('text_extracts').where('tenant_id', '=', file.tenant_id).where('node_id', '=', file.id));
  }

  /** The tenant's extraction row of a file (tests, status); undefined for another tenant's. */
  async byId(scope: TenantScope, id: number): Promise<Selectable<TextExtractsTable> | undefined> {
    const r = await this.db.async.first(this.db.k.selectFrom('text_extracts').selectAll().where('tenant_id', '=', scope.tenant_id).where('node_id', '=', id));
    return (
      r && {
        ...r,
        node_id: Number(r.node_id),
        size: Number(r.size),
        mtime: Number(r.mtime),
        chars: Number(r.chars),
        capped: Number(r.capped),
        taken: r.taken === null ? null : Number(r.taken),
      }
    );
  }

  /**
   * Per storage of the tenants: how many files are in each state, and its newest failures with their reasons (at
   * most `failures` each), for Admin → Status. Storages with no row are left out.
   */
  async byStorage(tenants: TenantScope[], failures: number): Promise<StorageTextStatus[]> {
    if (!tenants.length) return [];
    const k = this.db.k;
    const [counts, failed] = await Promise.all([
      this.db.async.all(
        k
          .selectFrom('text_extracts as x')
          .innerJoin('nodes as n', 'n.id', 'x.node_id')
          .select((eb) => ['n.storage_id', 'x.state', eb.fn.countAll<number>().as('c')])
          .where('x.tenant_id', 'in', ids(tenants))
          .groupBy(['n.storage_id', 'x.state']),
      ),
      // The newest failures of each storage: a window over the failed rows only.
      this.db.async.all(
        k
          .selectFrom((eb) =>
            eb
              .selectFrom('text_extracts as x')
              .innerJoin('nodes as n', 'n.id', 'x.node_id')
              .select(['n.storage_id', 'n.path', 'x.reason', 'x.updated_at'])
              .select(sql<number>`row_number() OVER (PARTITION BY n.storage_id ORDER BY x.updated_at DESC, x.node_id DESC)`.as('nth'))
              .where('x.tenant_id', 'in', ids(tenants))
              .where('x.state', '=', lit('failed'))
              .as('f'),
          )
          .select(['f.storage_id', 'f.path', 'f.reason', 'f.updated_at'])
          .where('f.nth', '<=', failures)
          .orderBy('f.storage_id')
          .orderBy('f.nth'),
      ),
    ]);
    const out = new Map<number, StorageTextStatus>();
    const of = (id: number) => {
      let s = out.get(id);
      if (!s) out.set(id, (s = { storage_id: id, pending: 0, done: 0, failed: 0, skipped: 0, failures: [] }));
      return s;
    };
    for (const r of counts) of(Number(r.storage_id))[r.state] = Number(r.c);
    for (const r of failed) of(Number(r.storage_id)).failures.push({ path: r.path, reason: r.reason ?? '', at: r.updated_at });
    return [...out.values()];
  }

  /** How many rows of the tenants are in each state. */
  async counts(tenants: TenantScope[]): Promise<Record<ExtractState, number>> {
    const out: Record<ExtractState, number> = { pending: 0, done: 0, failed: 0, skipped: 0 };
    if (!tenants.length) return out;
    const rows = await this.db.async.all(
      this.db.k
        .selectFrom('text_extracts')
        .select((eb) => ['state', eb.fn.countAll<number>().as('n')])
        .where('tenant_id', 'in', ids(tenants))
        .groupBy('state'),
    );
    for (const r of rows) out[r.state] = Number(r.n);
    return out;
  }

  /**
   * A window of each file's stored text around a hit of `q` (`around` characters before it, `span` in all),
   * for search snippets: only the window leaves the database, however long the body. The hit is looked for
   * as typed, then lower-case, capitalised and upper-case (both databases' lower() may fold ASCII only); the
   * first form found wins, and its search stops at its first occurrence (coalesce() is lazy), so a hit near
   * the start costs little whatever the body's length. The body is looked in first, then the metadata
   * (`in` says which held it); where no form is found in either, the start of the body (else of the
   * metadata) stands for it.
   */
  async windows(ids: number[], q: string, around: number, span: number): Promise<Map<number, TextWindow>> {
    if (ids.length === 0) return new Map();
    const forms = [...new Set([q, q.toLowerCase(), q.charAt(0).toUpperCase() + q.slice(1).toLowerCase(), q.toUpperCase()])];
    const pg = this.db.dialect === 'postgres';
    // One window per column, each from its first hit (or its start); the hit is in a window when a form is.
    const cut = (col: 'body' | 'meta') => {
      const at = sql`coalesce(${sql.join(forms.map((f) => (pg ? sql`nullif(strpos(${sql.ref(col)}, ${f}), 0)` : sql`nullif(instr(${sql.ref(col)}, ${f}), 0)`)))}, 1)`;
      return sql<string | null>`substr(${sql.ref(col)}, ${pg ? sql`greatest` : sql`max`}(1, ${at} - ${around}), ${span})`;
    };
    // Aside (a reader thread on SQLite): a page's windows read up to 100 long bodies.
    const rows = await this.db.async.aside.all(
      this.db.k
        .selectFrom('search_fts')
        .select(['rowid', cut('body').as('b'), cut('meta').as('m')])
        .where('rowid', 'in', ids.slice(0, 1000))
        .where((eb) => eb.or([eb('body', 'is not', null), eb('meta', 'is not', null)])),
    );
    const has = (w: string | null) => !!w && forms.some((f) => w.includes(f));
    const out = new Map<number, TextWindow>();
    for (const { rowid, b, m } of rows) {
      const w: TextWindow | null = has(b) || (b && !has(m)) ? { in: 'body', text: b! } : m ? { in: 'meta', text: m } : null;
      if (w) out.set(Number(rowid), w);
    }
    return out;
  }
}
