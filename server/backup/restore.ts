/**
 * Restores a backup archive into an empty data folder. Everything that can
 * refuse the restore is checked before the first byte is written: the target
 * is empty, the manifest is one this build reads, its schema is not newer
 * than this build's migrations, the archive holds exactly the entries the
 * manifest lists, every entry's sha256 and size match, and the database it
 * goes into is the right kind (and empty, on PostgreSQL). Each file is then
 * written to a temp name, flushed and renamed into place.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { chmod, mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { openZip, type ZipEntry } from '../archives';
import { pgRelationCount, pgRestore, redactUrl } from '../db';
import { DATABASE_ENTRY, dataPathOf, MANIFEST_NAME, MAX_MANIFEST_BYTES, parseManifest, schemaProblem, type Manifest } from './manifest';

/** Why a restore was refused; `reason` is stable for scripts and tests. Nothing was written. */
export class RestoreRefused extends Error {
  constructor(
    readonly reason: 'not_empty' | 'invalid' | 'schema_newer' | 'checksum' | 'database',
    message: string,
  ) {
    super(message);
    this.name = 'RestoreRefused';
  }
}

/** Opens `file` as a ZIP and checks it (manifest, schema, checksums) without writing anything; returns the manifest. */
export async function verifyBackup(file: string): Promise<Manifest> {
  const zip = await openLocalZip(file);
  try {
    return await verified(zip);
  } finally {
    zip.close();
  }
}

/**
 * Restores `file` into `dataDir` (created when missing; refused when it holds anything). A PostgreSQL
 * backup's dump goes into the database at `databaseUrl` with `pg_restore`, which must be empty; a SQLite
 * backup is refused when a database URL is set (the service would not open the restored file).
 */
export async function restoreBackup(file: string, dataDir: string, o: { databaseUrl?: string } = {}): Promise<Manifest> {
  await mustBeEmpty(dataDir);
  const zip = await openLocalZip(file);
  try {
    const m = await verified(zip);
    await checkDatabaseTarget(m, o.databaseUrl ?? '');
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    const byName = new Map(zip.entries.map((e) => [e.name, e]));
    try {
      for (const e of m.entries) {
        if (e.name !== DATABASE_ENTRY.postgres) {
          await extract(zip, byName.get(e.name)!, join(dataDir, dataPathOf(e.name)), e.mode);
          continue;
        }
        // The dump is only passing through: pg_restore reads it from the data folder, then it goes.
        const dump = join(dataDir, '.database.pgdump');
        await extract(zip, byName.get(e.name)!, dump, 0o600);
        await pgRestore(o.databaseUrl!, dump);
        await rm(dump);
      }
    } catch (e) {
      // The folder was empty: a failed restore (a full disk) leaves it empty again rather than half restored.
      for (const n of await readdir(dataDir)) await rm(join(dataDir, n), { recursive: true, force: true });
      throw e;
    }
    return m;
  } finally {
    zip.close();
  }
}

/** The backup's database kind must match where the service will look: a file, or an empty PostgreSQL database. */
async function checkDatabaseTarget(m: Manifest, url: string): Promise<void> {
  if (m.database === 'sqlite') {
    if (url)
      throw new RestoreRefused(
        'database',
        'this backup holds a SQLite database but SERVICE_DATABASE_URL is set: unset it to restore (then "service db migrate-to" moves it to PostgreSQL)',
      );
    return;
  }
  if (!url)
    throw new RestoreRefused(
      'database',
      'this backup holds a PostgreSQL dump (database.pgdump): set SERVICE_DATABASE_URL to an EMPTY database to restore it into',
    );
  const n = await pgRelationCount(url);
  if (n > 0) throw new RestoreRefused('not_empty', `the database ${redactUrl(url)} is not empty (${n} relations): restore only into a new, empty database`);
}

/** Writes one entry to a temp name beside `dest`, flushes it, sets its mode and renames it into place. */
async function extract(zip: LocalZip, z: ZipEntry, dest: string, mode: number): Promise<void> {
  await mkdir(dirname(dest), { recursive: true, mode: 0o700 });
  const tmp = `${dest}.restore-tmp`;
  await pipeline(await zip.open(z), createWriteStream(tmp, { flags: 'wx', mode: 0o600 }));
  const fh = await open(tmp, 'r+');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
  await chmod(tmp, mode);
  await rename(tmp, dest);
}

async function mustBeEmpty(dir: string): Promise<void> {
  let names: string[];
  try {
    if (!(await stat(dir)).isDirectory()) throw new RestoreRefused('not_empty', `${dir} is not a folder`);
    names = await readdir(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  if (names.length)
    throw new RestoreRefused(
      'not_empty',
      `the data folder ${dir} is not empty (${names.length} entries): restore only into an empty or new folder, so nothing there is overwritten`,
    );
}

type LocalZip = Awaited<ReturnType<typeof openZip>>;

async function openLocalZip(file: string): Promise<LocalZip> {
  const size = (await stat(file)).size;
  try {
    return await openZip({ size, read: async (s) => createReadStream(file, { start: s.start, end: s.end }) });
  } catch (e) {
    throw new RestoreRefused('invalid', `${file} is not a readable backup archive: ${(e as Error).message}`);
  }
}

/** The manifest, once everything in it checks out against the archive. */
async function verified(zip: LocalZip): Promise<Manifest> {
  const byName = new Map<string, ZipEntry>(zip.entries.filter((e) => !e.is_dir).map((e) => [e.name, e]));
  const mEntry = byName.get(MANIFEST_NAME);
  if (!mEntry || mEntry.size > MAX_MANIFEST_BYTES) throw new RestoreRefused('invalid', 'the archive has no manifest.json: it is not a Filedock backup');
  let m: Manifest;
  try {
    m = parseManifest((await bytesOf(zip, mEntry)).toString('utf8'));
  } catch (e) {
    throw new RestoreRefused('invalid', (e as Error).message);
  }
  const problem = schemaProblem(m);
  if (problem) throw new RestoreRefused('schema_newer', problem);
  const listed = new Set(m.entries.map((e) => e.name));
  const extra = [...byName.keys()].filter((n) => n !== MANIFEST_NAME && !listed.has(n));
  if (extra.length) throw new RestoreRefused('checksum', `the archive holds entries its manifest does not list: ${extra.slice(0, 5).join(', ')}`);
  for (const e of m.entries) {
    const z = byName.get(e.name);
    if (!z) throw new RestoreRefused('checksum', `${e.name} is listed in the manifest but missing from the archive`);
    const hash = createHash('sha256');
    let size = 0;
    try {
      await pipeline(
        await zip.open(z),
        new Writable({
          write(chunk: Buffer, _enc, done) {
            hash.update(chunk);
            size += chunk.length;
            done();
          },
        }),
      );
    } catch (err) {
      throw new RestoreRefused('checksum', `${e.name} is damaged in the archive: ${(err as Error).message}`);
    }
    if (size !== e.size || hash.digest('hex') !== e.sha256)
      throw new RestoreRefused('checksum', `${e.name} does not match its checksum in the manifest: the archive is damaged`);
  }
  return m;
}

async function bytesOf(zip: LocalZip, e: ZipEntry): Promise<Buffer> {
  const parts: Buffer[] = [];
  await pipeline(
    await zip.open(e),
    new Writable({
      write(chunk: Buffer, _enc, done) {
        parts.push(chunk);
        done();
      },
    }),
  );
  return Buffer.concat(parts);
}
