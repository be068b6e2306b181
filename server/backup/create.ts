/**
 * Writes a backup of this install as one ZIP: a consistent copy of the
 * database (`Db.snapshot`: SQLite's online backup or `pg_dump`), the secret
 * key, the config file and the data folder's `state/` and `plugins/`, then
 * `manifest.json` with every entry's size and sha256 (hashed as it is
 * written, so each file is read once). Safe while the service runs: the
 * snapshot reads the database online; the other files change rarely.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, type Stats } from 'node:fs';
import { lstat, mkdtemp, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { Readable, Transform, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Db } from '../db';
import type { DataDirLayout } from '../lib/data-dir';
import { ZipWriter } from '../lib/zip-writer';
import { currentSchema, DATABASE_ENTRY, FORMAT_VERSION, MANIFEST_NAME, type Manifest, type ManifestEntry } from './manifest';

export interface BackupSources {
  db: Db;
  dirs: DataDirLayout;
  /** SERVICE_SECRET_KEY_FILE when set (the key lives outside the data folder), else ''. */
  secretKeyFile: string;
  /** SERVICE_CONFIG when set, else ''. */
  configFile: string;
  version: string;
}

interface Source {
  name: string;
  file: string;
  mode: number;
}

/** `filedock-backup-2026-12-05T12-00-00-123Z.zip`: sorts by time, safe on every file system. */
export function backupFileName(at = new Date()): string {
  return `filedock-backup-${at.toISOString().replace(/[:.]/g, '-')}.zip`;
}

export const BACKUP_NAME = /^filedock-backup-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z\.zip$/;

/**
 * Streams the backup into `out` (ended at the finish); returns its manifest. The database copy is made
 * in a scratch folder under the data folder's staging and removed afterwards.
 */
export async function writeBackup(src: BackupSources, out: Writable, signal?: AbortSignal): Promise<Manifest> {
  const scratch = await mkdtemp(join(src.dirs.staging, 'backup-'));
  try {
    const dbFile = await src.db.snapshot(join(scratch, 'database'));
    const sources: Source[] = [
      { name: DATABASE_ENTRY[src.db.dialect], file: dbFile, mode: 0o600 },
      { name: 'secret.key', file: src.secretKeyFile || src.dirs.secretKey, mode: 0o600 },
      ...(src.configFile ? [{ name: `config/${basename(src.configFile)}`, file: src.configFile, mode: 0o600 }] : []),
      ...(await tree(src.dirs.state, 'state')),
      ...(await tree(src.dirs.plugins, 'plugins')),
    ];
    const zip = new ZipWriter(out, { signal });
    const entries: ManifestEntry[] = [];
    for (const s of sources) {
      const hash = createHash('sha256');
      let size = 0;
      const tap = new Transform({
        transform(chunk: Buffer, _enc, done) {
          hash.update(chunk);
          size += chunk.length;
          done(null, chunk);
        },
      });
      const st = await stat(s.file);
      const body = createReadStream(s.file, { highWaterMark: 1 << 20 });
      const piped = pipeline(body, tap);
      await Promise.all([zip.addFile(s.name, tap, { size: st.size, mtime: st.mtime, compress: true, mode: s.mode }), piped]);
      entries.push({ name: s.name, size, sha256: hash.digest('hex'), mode: s.mode });
    }
    const manifest: Manifest = {
      format_version: FORMAT_VERSION,
      filedock_version: src.version,
      schema: currentSchema(),
      database: src.db.dialect,
      created_at: new Date().toISOString(),
      entries,
    };
    const text = Buffer.from(JSON.stringify(manifest, null, 2));
    await zip.addFile(MANIFEST_NAME, Readable.from([text]), { size: text.length, mtime: Date.now(), compress: true });
    await zip.finish();
    return manifest;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * Writes the backup to `dir/<backupFileName>` atomically (a hidden temp file, flushed, then renamed):
 * a crash leaves no half archive under a backup's name. Returns the file and its manifest.
 */
export async function writeBackupFile(src: BackupSources, dir: string, signal?: AbortSignal): Promise<{ file: string; bytes: number; manifest: Manifest }> {
  const name = backupFileName();
  const tmp = join(dir, `.${name}.${process.pid}.tmp`);
  try {
    const out = createWriteStream(tmp, { flags: 'wx', mode: 0o600 });
    const [manifest] = await Promise.all([writeBackup(src, out, signal), new Promise<void>((ok, fail) => out.once('close', ok).once('error', fail))]);
    const fh = await open(tmp, 'r+');
    let bytes: number;
    try {
      await fh.sync();
      bytes = (await fh.stat()).size;
    } finally {
      await fh.close();
    }
    const file = join(dir, name);
    await rename(tmp, file);
    return { file, bytes, manifest };
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
}

/** Regular files under `dir` (absent: none), named `<prefix>/<relative path>`, with their permission bits; symlinks are skipped. */
async function tree(dir: string, prefix: string): Promise<Source[]> {
  const out: Source[] = [];
  const walk = async (abs: string, rel: string) => {
    let names: string[];
    try {
      names = (await readdir(abs)).sort();
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw e;
    }
    for (const n of names) {
      const p = join(abs, n);
      const st: Stats = await lstat(p);
      if (st.isDirectory()) await walk(p, `${rel}/${n}`);
      else if (st.isFile()) out.push({ name: `${rel}/${n}`, file: p, mode: st.mode & 0o777 });
    }
  };
  await walk(dir, prefix);
  return out;
}
