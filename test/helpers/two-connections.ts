/**
 * A scenario of two instances sharing one database, run twice: on two connections to one SQLite file and
 * on two connections to one PostgreSQL database (a throwaway cluster; skipped only outside CI without it).
 */
import { after, before, describe, test } from 'node:test';
import { openDatabase, openPostgresDatabase, type Db } from '../../server/db';
import { tempDir } from './tools';
import { needPostgres, startPostgres, type PgCluster } from './postgres';

export function onTwoConnections(what: string, scenario: (a: Db, b: Db) => void | Promise<void>): void {
  test(`SQLite: two connections share ${what}`, async () => {
    const { dir, cleanup } = tempDir();
    const a = openDatabase(`${dir}/db.sqlite`);
    const b = openDatabase(`${dir}/db.sqlite`);
    try {
      await scenario(a, b);
    } finally {
      await a.close();
      await b.close();
      cleanup();
    }
  });

  const skip = needPostgres();
  describe(`${what} on PostgreSQL`, { skip: skip ?? false }, () => {
    let cluster: PgCluster;
    before(async () => {
      cluster = await startPostgres();
    });
    after(async () => {
      await cluster?.destroy();
    });
    test(`two instances share ${what}`, async () => {
      const url = await cluster.createDatabase('shared');
      const a = await openPostgresDatabase(url);
      const b = await openPostgresDatabase(url);
      try {
        await scenario(a, b);
      } finally {
        await a.close();
        await b.close();
      }
    });
  });
}
