/**
 * `service backup create [--to DIR]` and `service backup restore FILE [--data-dir DIR]`
 * (docs/operations.md, "Backups of Filedock itself").
 */
import { existsSync, statSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import type { Config } from '../config';
import { openDatabase, openPostgresDatabase } from '../db';
import { layout } from '../lib/data-dir';
import { recordBackup, restoreBackup, RestoreRefused, writeBackupFile } from '../backup';
import { parse, UsageError } from './args';

const USAGE = `
Usage: service backup create [--to DIR]
       service backup restore FILE [--data-dir DIR]

create   writes one archive (filedock-backup-<time>.zip) into DIR (default: the
         current folder): a consistent copy of the database (taken online: the
         service may keep running), the secret key, the config file, the data
         folder's state/ and plugins/, and manifest.json with each file's sha256.
restore  checks the archive (schema not newer than this build, every checksum)
         and restores it into an EMPTY data folder (default: SERVICE_DATA_DIR);
         a PostgreSQL backup's dump goes into the EMPTY database SERVICE_DATABASE_URL
         names (pg_restore, one transaction). Start the service afterwards.
Exit codes: 0 done, 1 failed, 2 refused (not empty, damaged, newer schema).`;

export async function backupCommand(argv: string[], config: Config): Promise<number> {
  const { positionals, values } = parse(argv, { to: { type: 'string' }, 'data-dir': { type: 'string' } }, USAGE);
  const [sub, ...rest] = positionals;
  if (sub === 'create' && rest.length === 0 && values['data-dir'] === undefined) return create(config, resolve(values.to ?? '.'));
  if (sub === 'restore' && rest.length === 1 && values.to === undefined)
    return restore(resolve(rest[0]), resolve(values['data-dir'] ?? config.dataDirResolved), config.databaseUrl);
  throw new UsageError(USAGE.trim());
}

async function create(config: Config, to: string): Promise<number> {
  const dirs = layout(config.dataDirResolved);
  if (!existsSync(to) || !statSync(to).isDirectory()) {
    console.error(`--to ${to} is not a folder`);
    return 2;
  }
  if (!config.databaseUrl && !existsSync(dirs.db)) {
    console.error(`nothing to back up: ${dirs.db} does not exist (SERVICE_DATA_DIR)`);
    return 2;
  }
  // No data-folder lock: the snapshot reads the database online, beside a running service.
  const db = config.databaseUrl ? await openPostgresDatabase(config.databaseUrl) : openDatabase(dirs.db, undefined, { busyTimeoutMs: 5000 });
  try {
    const t0 = Date.now();
    const { file, bytes, manifest } = await writeBackupFile(
      { db, dirs, secretKeyFile: config.secretKeyFile, configFile: config.config, version: config.version },
      to,
    );
    await recordBackup(db.meta, { at: new Date().toISOString(), file: basename(file), where: to, bytes, trigger: 'cli' });
    console.log(
      `backed up ${manifest.entries.length} files (${manifest.database}, schema ${manifest.schema}) into ${file}: ${bytes} bytes in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
    );
    return 0;
  } finally {
    await db.close();
  }
}

async function restore(file: string, dataDir: string, databaseUrl: string): Promise<number> {
  try {
    const m = await restoreBackup(file, dataDir, { databaseUrl });
    console.log(`restored ${m.entries.length} files of the backup of ${m.created_at} (Filedock ${m.filedock_version}, schema ${m.schema}) into ${dataDir}`);
    console.log(
      `start the service with SERVICE_DATA_DIR=${dataDir}${m.entries.some((e) => e.name.startsWith('config/')) ? ' (its config file is in config/ there: point SERVICE_CONFIG at it)' : ''}`,
    );
    return 0;
  } catch (e) {
    if (!(e instanceof RestoreRefused)) throw e;
    console.error(`restore refused, nothing was written: ${e.message}`);
    return 2;
  }
}
