/**
 * A migrated database of its own for a repository test (`*.repo.test.ts`): a SQLite file in a temp dir, or
 * with TEST_DATABASE=postgres a PostgreSQL database picked the way test servers pick theirs (the run's
 * template copied, or a throwaway cluster). The same cases then run on both databases.
 */
import { join } from 'node:path';
import { openDatabase, openPostgresDatabase, type Db } from '../../server/db';
import { databaseUrl } from './server';
import { tempDir } from './tools';

export interface RepoTestDb {
  db: Db;
  /** Which database the cases run on, for test names and messages. */
  kind: 'sqlite' | 'postgres';
  close(): Promise<void>;
}

export async function openRepoTestDb(): Promise<RepoTestDb> {
  const t = tempDir('filedock-repo-');
  const url = await databaseUrl(t.dir);
  const db = url ? await openPostgresDatabase(url) : openDatabase(join(t.dir, 'db.sqlite'));
  return {
    db,
    kind: url ? 'postgres' : 'sqlite',
    async close() {
      await db.close();
      t.cleanup();
    },
  };
}
