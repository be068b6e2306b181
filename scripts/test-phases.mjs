// Which test files a whole run (scripts/test.mjs, both databases) runs in its PostgreSQL phase
// (docs/postgresql.md, "Suites on PostgreSQL").
import { existsSync, readFileSync } from 'node:fs';

/** Suites about SQLite itself (its locks; its file as the source of `db migrate-to`): no PostgreSQL form. */
export const SQLITE_ONLY = ['test/http/db-lock.test.ts', 'test/cli/migrate-to.test.ts'];

/**
 * HTTP/CLI suites that reach dialect-specific code (`grep -rn dialect server`) through a whole server and
 * run again with TEST_DATABASE=postgres. The rest of the server suites run on PostgreSQL only with
 * TEST_POSTGRES_ALL=1: their data goes through repositories that `*.repo.test.ts` cover on both databases.
 * Suites that start clusters of their own (several instances, pg-away, postgres, backup-drill,
 * migrate-to) need no entry: they run on PostgreSQL in every phase.
 */
export const POSTGRES_SUITES = [
  // The listing's page SQL and entry JSON per dialect (listing.repo pageSql, entry.ts), trigram search, the search index upsert.
  'test/http/files.test.ts',
  // Every route's tenant scope (docs/tenants.md, step 3): each repository's statements per dialect, through the whole route table.
  'test/http/tenants-isolation.test.ts',
  // The same at every gateway verb (the export, node and storage lookups behind WebDAV, SFTP, S3 and NFS).
  'test/gateways/tenants-isolation.test.ts',
  // Tenant quotas: the usage aggregate (sum() of bigints is text on PostgreSQL), the links count, every write door.
  'test/http/tenant-quotas.test.ts',
  // The same entry JSON with the lock join (entryJsonSql withLocks).
  'test/http/locks.test.ts',
  // Public link download caps: stream slots on the pool, released before a refusal answers.
  'test/http/shares.test.ts',
  // A capped link retried at once: its slot is released on the pool before the refusal answers (caught here in CI).
  'test/http/shares-extra.test.ts',
  // Upload caps and quota under concurrent uploads (sum() of bigints arrives as text on PostgreSQL).
  'test/http/uploads.test.ts',
  // Interrupted uploads recovered at start: only this instance's on PostgreSQL (main.ts, uploads.recover).
  'test/http/uploads-resume.test.ts',
  // Search inside documents: text_extracts upserts, search_fts body upserts and snippet windows per dialect.
  'test/http/fulltext-search.test.ts',
  // The same for legacy office files and e-mail (their formats' extractors feed the same upserts).
  'test/http/search-legacy.test.ts',
  // Photo, audio and video metadata: search_fts.meta upserts and windows, the taken filter per dialect.
  'test/http/search-metadata.test.ts',
  // The op queue's leases and the ops repository's PostgreSQL statements (queue.ts, ops.repo).
  'test/http/ops-realtime.test.ts',
  // Sign-in throttles shared through the database on PostgreSQL (auth/index.ts, shared scope).
  'test/http/auth.test.ts',
  // The outbox and the bus's every-instance subscribers over the LISTEN/NOTIFY change channel.
  'test/http/events.test.ts',
  // The storages cache and its change notices; sync's bulk insert on PostgreSQL (sync.ts insertMany).
  'test/http/storages.test.ts',
  // Versions newest first (SQLite needs LIMIT -1 before OFFSET, versions.repo).
  'test/http/protection.test.ts',
  // Backups name their database entry by dialect and hold a pg_dump (backup/create.ts).
  'test/http/admin-backups.test.ts',
  // Replication's runs and failures (upserts PostgreSQL calls ambiguous when written loosely).
  'test/replication/replication-local.test.ts',
  // NFS file handles resolved to node ids, stale handles included.
  'test/gateways/nfs-bad-input.test.ts',
  // WebDAV paths and dead properties resolved through node ids (props.repo).
  'test/gateways/webdav.test.ts',
  // Ops resumed and uploads finished or released after a SIGKILL: the queue's and sessions' recovery at start.
  'test/http/crash-recovery.test.ts',
  // The vault's tables (bigint ids as text, the member-set unit) and the encrypted roots index read from them.
  'test/http/vault.test.ts',
  // Encrypted folders at every door: search's exclusion SQL per dialect, scans, links, gateways.
  'test/http/vault-doors.test.ts',
  // Apps per tenant: the apps' composite keys, the kv unit's SQL text and the key-value caps per dialect.
  'test/http/tenant-apps.test.ts',
];

/** A file whose suites open their databases through test/helpers/test-database: a repository suite. */
const usesTestDatabase = (file) => /from '(\.\.\/)+(test\/)?helpers\/test-database'/.test(readFileSync(file, 'utf8'));
/** A file whose servers start through test/helpers/server (and so follow TEST_DATABASE). */
const usesTestServer = (file) => /from '(\.\.\/)+(test\/)?helpers\/server'/.test(readFileSync(file, 'utf8'));
/** PostgreSQL-only suites: each starts a cluster of its own, whatever TEST_DATABASE says. */
export const isPostgresOnly = (file) => file.endsWith('.pg.test.ts');

/**
 * The PostgreSQL phase of a whole run: every repository suite, every `*.pg.test.ts` and POSTGRES_SUITES;
 * with `all`, every suite that follows TEST_DATABASE (as before; a full both-databases run).
 */
export function postgresPhase(selected, all) {
  for (const f of POSTGRES_SUITES)
    if (!existsSync(new URL(`../${f}`, import.meta.url))) throw new Error(`scripts/test-phases.mjs: ${f} is listed but does not exist`);
  if (all) return selected.filter((f) => !SQLITE_ONLY.includes(f) && (isPostgresOnly(f) || usesTestDatabase(f) || usesTestServer(f)));
  return selected.filter((f) => isPostgresOnly(f) || usesTestDatabase(f) || POSTGRES_SUITES.includes(f));
}
