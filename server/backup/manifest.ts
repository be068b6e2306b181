/**
 * The backup archive's table of contents (`manifest.json`, the last entry of
 * the ZIP): what made it, which schema its database has, and each entry's
 * size and sha256. Restore trusts nothing in the archive that the manifest
 * does not vouch for.
 */
import { MIGRATIONS } from '../db/migrations';
import { inOrder } from '../db/migrations/order';

/** Bumped when the archive's layout changes in a way an older restore cannot read. */
export const FORMAT_VERSION = 1;
export const MANIFEST_NAME = 'manifest.json';
/** A manifest larger than this is not one of ours (it is read into memory). */
export const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;

export interface ManifestEntry {
  /** Path inside the archive, also where it goes in the data folder (see `dataPathOf`). */
  name: string;
  size: number;
  sha256: string;
  /** Unix permission bits to restore (secret.key 0600, plugin programs executable). */
  mode: number;
}

export interface Manifest {
  format_version: number;
  filedock_version: string;
  /** The newest migration applied to the database in the archive. */
  schema: string;
  database: 'sqlite' | 'postgres';
  created_at: string;
  entries: ManifestEntry[];
}

/** Archive name of the database copy, by kind. */
export const DATABASE_ENTRY = { sqlite: 'database.sqlite', postgres: 'database.pgdump' } as const;

/** The newest migration this build knows: what a database it opened is at. */
export function currentSchema(): string {
  const all = inOrder(MIGRATIONS);
  return all[all.length - 1].name;
}

/**
 * Why this build cannot restore `m` (null when it can): a newer format, or a
 * schema this build's migrations do not reach. An older schema is fine: the
 * service migrates it forward when it opens the restored database.
 */
export function schemaProblem(m: Manifest): string | null {
  if (m.format_version > FORMAT_VERSION)
    return `the backup's format ${m.format_version} is newer than this build reads (${FORMAT_VERSION}); restore it with Filedock ${m.filedock_version} or later`;
  if (MIGRATIONS.some((x) => x.name === m.schema)) return null;
  const newest = currentSchema();
  if (m.schema.localeCompare(newest) > 0) {
    return `the backup's database schema (${m.schema}) is newer than this build's (${newest}): it was made by Filedock ${m.filedock_version}; restore it with that version or later`;
  }
  return `the backup's database schema (${m.schema}) is not one this build knows`;
}

const SHA256 = /^[0-9a-f]{64}$/;
/** Archive names restore accepts: the database, the key, and files under the folders a backup takes. */
const ALLOWED = /^(database\.(sqlite|pgdump)|secret\.key|(config|state|plugins)\/[^/\0]+(\/[^/\0]+)*)$/;

/** Parses and checks the manifest's shape; throws an Error saying what is wrong. */
export function parseManifest(text: string): Manifest {
  let m: Manifest;
  try {
    m = JSON.parse(text) as Manifest;
  } catch (e) {
    throw new Error(`manifest.json is not JSON: ${(e as Error).message}`);
  }
  const ok =
    !!m &&
    typeof m === 'object' &&
    Number.isInteger(m.format_version) &&
    typeof m.filedock_version === 'string' &&
    typeof m.schema === 'string' &&
    (m.database === 'sqlite' || m.database === 'postgres') &&
    typeof m.created_at === 'string' &&
    Array.isArray(m.entries);
  if (!ok) throw new Error('manifest.json lacks format_version, filedock_version, schema, database, created_at or entries');
  const seen = new Set<string>();
  for (const e of m.entries) {
    const fine =
      e &&
      typeof e.name === 'string' &&
      ALLOWED.test(e.name) &&
      !e.name.split('/').some((s) => s === '.' || s === '..') &&
      Number.isSafeInteger(e.size) &&
      e.size >= 0 &&
      typeof e.sha256 === 'string' &&
      SHA256.test(e.sha256) &&
      Number.isInteger(e.mode) &&
      e.mode >= 0 &&
      e.mode <= 0o777;
    if (!fine) throw new Error(`manifest.json has a bad entry: ${JSON.stringify(e).slice(0, 200)}`);
    if (seen.has(e.name)) throw new Error(`manifest.json lists ${e.name} twice`);
    seen.add(e.name);
  }
  if (!seen.has(DATABASE_ENTRY[m.database])) throw new Error(`manifest.json lists no ${DATABASE_ENTRY[m.database]}`);
  return m;
}

/** Where an archive entry goes in the data folder (relative): the database under its usual name, the rest as named. */
export function dataPathOf(name: string): string {
  return name === DATABASE_ENTRY.sqlite ? 'filedock.sqlite' : name;
}
