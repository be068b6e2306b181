/**
 * The real database with its synchronous face closed: a repository test passes its repository this `Db`,
 * so a statement left on `db.sqlite` or `db.all/first/run` (on PostgreSQL the blocking bridge, issue 30)
 * fails the test instead of passing unnoticed.
 */
import type { Db } from '../../server/db';

const SYNC_FACE = new Set<PropertyKey>(['sqlite', 'all', 'first', 'run']);

export function asyncOnly(db: Db): Db {
  return new Proxy(db, {
    get(target, key, receiver) {
      if (SYNC_FACE.has(key)) throw new Error(`the synchronous face db.${String(key)} was used; repositories run on db.async`);
      return Reflect.get(target, key, receiver);
    },
  });
}
