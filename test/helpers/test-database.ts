/**
 * The database a test gets: SQLite (a file in its data dir, the default) or, under TEST_DATABASE=postgres,
 * a PostgreSQL database of its own. `openTestDb()` opens one for a repository test (`*.repo.test.ts`).
 */
import { join } from 'node:path';
import { DEFAULT_TENANT, openDatabase, openPostgresDatabase, type Db, type TenantScope } from '../../server/db';
import { StoragesRepo, newUid } from '../../server/catalogue/storages.repo';
import { tempDir } from './tools';
import { createFromTemplate, needPostgres, startPostgres, type PgCluster } from './postgres';

let cluster: Promise<PgCluster> | undefined;
let databases = 0;
/** Each data dir's database: a server started again on the same data dir is a restart, and finds its rows. */
const byDataDir = new Map<string, string>();
/**
 * TEST_DATABASE=postgres runs a suite on PostgreSQL: every test server gets its own database
 * (docs/postgresql.md, "What exists today"); a restart on the same data dir gets the same database
 * back, as it gets the same SQLite file. Under scripts/test.mjs the run's one cluster is named by
 * TEST_PG_URL and each database is a copy of its migrated template TEST_PG_TEMPLATE; run otherwise, a
 * test process starts a throwaway cluster of its own and each database migrates from empty.
 */
export async function databaseUrl(dataDir: string): Promise<string | undefined> {
  if (process.env.TEST_DATABASE !== 'postgres') return undefined;
  const known = byDataDir.get(dataDir);
  if (known) return known;
  const name = `t${process.pid}_${++databases}`;
  const { TEST_PG_URL: shared, TEST_PG_TEMPLATE: template } = process.env;
  const url = shared && template ? await createFromTemplate(shared, name, template) : await (await (cluster ??= startPostgres())).createDatabase(name);
  byDataDir.set(dataDir, url);
  return url;
}

/** The dialect the run asks for: `postgres` under TEST_DATABASE=postgres (and then a missing PostgreSQL fails under CI). */
export function testDialect(): 'sqlite' | 'postgres' {
  if (process.env.TEST_DATABASE !== 'postgres') return 'sqlite';
  const missing = needPostgres();
  if (missing) throw new Error(missing);
  return 'postgres';
}

export interface TestDb {
  db: Db;
  close(): Promise<void>;
}

/** A migrated database of the run's dialect in a temp dir of its own; `close()` closes and removes it. */
export async function openTestDb(): Promise<TestDb> {
  const { dir, cleanup } = tempDir('filedock-repo-');
  const url = testDialect() === 'postgres' ? await databaseUrl(dir) : undefined;
  const db = url ? await openPostgresDatabase(url) : openDatabase(join(dir, 'db.sqlite'));
  return {
    db,
    async close() {
      await db.close();
      cleanup();
    },
  };
}

/** A local storage row named `name` of `tenant` (the parent most tables reference); returns its id. */
export async function testStorage(db: Db, name = 'Files', tenant: TenantScope = DEFAULT_TENANT): Promise<number> {
  const made = await new StoragesRepo(db).insert(tenant, {
    uid: newUid(),
    name,
    driver: 'local',
    config: '{}',
    mount_path: '/',
    sync_mode: 'poll',
    sync_interval_s: 900,
    enabled: 1,
    read_only: 0,
    rbac_enabled: 0,
    replica_target_id: null,
  });
  if (!made) throw new Error(`storage name ${name} taken`);
  return made.id;
}
