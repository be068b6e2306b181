/**
 * Dead properties (PROPPATCH) per node, in `dav_props` keyed by storage id
 * and the node's path in it, so a storage rename (or the uid) keeps them.
 * They follow the node through this gateway: a WebDAV MOVE moves them, COPY
 * copies them, DELETE drops them, and a new node created by PUT or MKCOL
 * starts clean (stale rows left by a delete or move through another door are
 * dropped then). A node moved through another door loses its properties; the
 * catalogue keys its rows by path too, so nothing better is on offer. A row carries its storage's tenant
 * (docs/tenants.md, principle 2): every statement names it.
 */
import { sql } from 'kysely';
import { escapeLike, type Db, type TenantScope } from '../../db';
import type { Place } from '../../files';

/** A node's place with its storage's tenant (the resolved target's storage row gives it). */
export type DavPlace = Place & TenantScope;

export interface DeadProp {
  ns: string;
  name: string;
  /** Self-contained XML content. */
  value: string;
}

const parentOf = (rel: string): string => (rel.includes('/') ? rel.slice(0, rel.lastIndexOf('/')) : '');
/** A LIKE pattern for everything below `rel` ('' is the root: everything). */
const under = (rel: string): string => (rel === '' ? '%' : escapeLike(rel) + '/%');

/** Rows per INSERT when a transfer writes them back (well under either database's parameter limit). */
const BATCH = 500;

export class DeadProps {
  constructor(private db: Db) {}

  /** The properties of one node ([] when it has none). */
  of(p: DavPlace): Promise<DeadProp[]> {
    return this.db.async.all(
      this.db.k
        .selectFrom('dav_props')
        .select(['ns', 'name', 'value'])
        .where('tenant_id', '=', p.tenant_id)
        .where('storage_id', '=', p.storage_id)
        .where('path', '=', p.rel),
    );
  }

  /** The properties of every child of a folder, by child path (one query per listing). */
  async children(folder: DavPlace): Promise<Map<string, DeadProp[]>> {
    const out = new Map<string, DeadProp[]>();
    const rows = await this.db.async.all(
      this.db.k
        .selectFrom('dav_props')
        .select(['path', 'ns', 'name', 'value'])
        .where('tenant_id', '=', folder.tenant_id)
        .where('storage_id', '=', folder.storage_id)
        .where('dir', '=', folder.rel),
    );
    for (const r of rows) {
      const list = out.get(r.path) ?? [];
      list.push({ ns: r.ns, name: r.name, value: r.value });
      out.set(r.path, list);
    }
    return out;
  }

  /** Applies sets (value) and removes (null) as one unit of work: all or none. */
  async patch(p: DavPlace, ops: Array<{ ns: string; name: string; value: string | null }>): Promise<void> {
    const k = this.db.k;
    await this.db.async.unit(function* (t) {
      for (const o of ops) {
        if (o.value === null) {
          yield* t.run(
            k
              .deleteFrom('dav_props')
              .where('tenant_id', '=', p.tenant_id)
              .where('storage_id', '=', p.storage_id)
              .where('path', '=', p.rel)
              .where('ns', '=', o.ns)
              .where('name', '=', o.name),
          );
        } else {
          const value = o.value;
          const row = { tenant_id: p.tenant_id, storage_id: p.storage_id, path: p.rel, dir: parentOf(p.rel), ns: o.ns, name: o.name, value };
          yield* t.run(
            k
              .insertInto('dav_props')
              .values(row)
              .onConflict((c) => c.columns(['storage_id', 'path', 'ns', 'name']).doUpdateSet({ value }).where('dav_props.tenant_id', '=', p.tenant_id)),
          );
        }
      }
    });
  }

  /** Drops the properties of a node and everything below it. Idempotent. */
  async drop(p: DavPlace): Promise<void> {
    await this.db.async.run(this.dropping(p));
  }

  /** Copies (or moves) the properties of `from` and below to `to`, replacing what `to` had, as one unit of work. */
  async transfer(from: DavPlace, to: DavPlace, move: boolean): Promise<void> {
    const k = this.db.k;
    const dropping = (p: DavPlace) => this.dropping(p);
    await this.db.async.unit(function* (t) {
      yield* t.run(dropping(to));
      const rows = yield* t.all(
        k
          .selectFrom('dav_props')
          .selectAll()
          .where('tenant_id', '=', from.tenant_id)
          .where('storage_id', '=', from.storage_id)
          .where((w) => w.or([w('path', '=', from.rel), w('path', 'like', sql<string>`${under(from.rel)} ESCAPE '\\'`)])),
      );
      if (move) yield* t.run(dropping(from));
      const moved = rows.map((r) => {
        const path = to.rel + r.path.slice(from.rel.length);
        const rel = to.rel === '' ? path.replace(/^\//, '') : path;
        return { ...r, storage_id: to.storage_id, path: rel, dir: parentOf(rel) };
      });
      for (let i = 0; i < moved.length; i += BATCH)
        yield* t.run(
          k
            .insertInto('dav_props')
            .values(moved.slice(i, i + BATCH).map((r) => ({ ...r, tenant_id: to.tenant_id })))
            .onConflict((c) => c.doNothing()),
        );
    });
  }

  private dropping(p: DavPlace) {
    return this.db.k
      .deleteFrom('dav_props')
      .where('tenant_id', '=', p.tenant_id)
      .where('storage_id', '=', p.storage_id)
      .where((w) => w.or([w('path', '=', p.rel), w('path', 'like', sql<string>`${under(p.rel)} ESCAPE '\\'`)]));
  }
}
