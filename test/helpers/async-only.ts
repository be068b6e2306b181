/**
 * The real database with its synchronous face closed: a repository test passes its repository this `Db`,
 * so a statement left on SQLite's in-process handle `db.sqlite` (which PostgreSQL does not have) fails the
 * test on SQLite too, instead of passing there unnoticed.
 */
import type { Db } from '../../server/db';

const SYNC_FACE = new Set<PropertyKey>(['sqlite']);

export function asyncOnly(db: Db): Db {
  return new Proxy(db, {
    get(target, key, receiver) {
      if (SYNC_FACE.has(key)) throw new Error(`the synchronous face db.${String(key)} was used; repositories run on db.async`);
      return Reflect.get(target, key, receiver);
    },
  });
}
