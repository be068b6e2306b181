/**
 * Dead properties (PROPPATCH) per node, in `dav_props` keyed by storage id
 * and the node's path in it, so a storage rename (or the uid) keeps them.
 * They follow the node through this gateway: a WebDAV MOVE moves them, COPY
 * copies them, DELETE drops them, and a new node created by PUT or MKCOL
 * starts clean (stale rows left by a delete or move through another door are
 * dropped then). A node moved through another door loses its properties; the
 * catalogue keys its rows by path too, so nothing better is on offer.
 */
import { sql } from 'kysely';
import type { Db } from '../../db';
import type { Place } from '../../files';

export interface DeadProp {
  ns: string;
  name: string;
  /** Self-contained XML content. */
  value: string;
}

const parentOf = (rel: string): string => (rel.includes('/') ? rel.slice(0, rel.lastIndexOf('/')) : '');
/** A LIKE pattern for everything below `rel` ('' is the root: everything). */
const under = (rel: string): string => (rel === '' ? '%' : rel.replace(/[\\%_]/g, (c) => '\\' + c) + '/%');

export class DeadProps {
  constructor(private db: Db) {}

  /** The properties of one node. */
  of(p: Place): DeadProp[] {
    return this.db.all(this.db.k.selectFrom('dav_props').select(['ns', 'name', 'value']).where('storage_id', '=', p.storage_id).where('path', '=', p.rel));
  }

  /** The properties of every child of a folder, by child path (one query per listing). */
  children(folder: Place): Map<string, DeadProp[]> {
    const out = new Map<string, DeadProp[]>();
    const rows = this.db.all(this.db.k.selectFrom('dav_props').select(['path', 'ns', 'name', 'value']).where('storage_id', '=', folder.storage_id).where('dir', '=', folder.rel));
    for (const r of rows) {
      const list = out.get(r.path) ?? [];
      list.push({ ns: r.ns, name: r.name, value: r.value });
      out.set(r.path, list);
    }
    return out;
  }

  /** Applies sets (value) and removes (null) in one transaction. */
  patch(p: Place, ops: Array<{ ns: string; name: string; value: string | null }>): void {
    this.db.sqlite.transaction(() => {
      for (const o of ops) {
        if (o.value === null) {
          this.db.run(this.db.k.deleteFrom('dav_props').where('storage_id', '=', p.storage_id).where('path', '=', p.rel).where('ns', '=', o.ns).where('name', '=', o.name));
        } else {
          const value = o.value;
          const row = { storage_id: p.storage_id, path: p.rel, dir: parentOf(p.rel), ns: o.ns, name: o.name, value };
          this.db.run(this.db.k.insertInto('dav_props').values(row).onConflict((c) => c.columns(['storage_id', 'path', 'ns', 'name']).doUpdateSet({ value })));
        }
      }
    })();
  }

  /** Drops the properties of a node and everything below it. */
  drop(p: Place): void {
    this.db.run(this.db.k.deleteFrom('dav_props').where('storage_id', '=', p.storage_id).where((w) => w.or([w('path', '=', p.rel), w('path', 'like', sql<string>`${under(p.rel)} ESCAPE '\\'`)])));
  }

  /** Copies (or moves) the properties of `from` and below to `to`, replacing what `to` had. */
  transfer(from: Place, to: Place, move: boolean): void {
    this.db.sqlite.transaction(() => {
      this.drop(to);
      const rows = this.db.all(
        this.db.k.selectFrom('dav_props').selectAll().where('storage_id', '=', from.storage_id).where((w) => w.or([w('path', '=', from.rel), w('path', 'like', sql<string>`${under(from.rel)} ESCAPE '\\'`)])),
      );
      if (move) this.drop(from);
      for (const r of rows) {
        const path = to.rel + r.path.slice(from.rel.length);
        const rel = to.rel === '' ? path.replace(/^\//, '') : path;
        this.db.run(this.db.k.insertInto('dav_props').values({ ...r, storage_id: to.storage_id, path: rel, dir: parentOf(rel) }).onConflict((c) => c.doNothing()));
      }
    })();
  }
}
