/**
 * Backups of Filedock itself: one archive holding the database copy, the
 * secret key and the settings kept outside the database, made by the CLI,
 * on a schedule or on request, and restored into an empty data folder.
 */
export { writeBackup, writeBackupFile, backupFileName, BACKUP_NAME, type BackupSources } from './create';
export { restoreBackup, verifyBackup, RestoreRefused } from './restore';
export { FORMAT_VERSION, currentSchema, type Manifest, type ManifestEntry } from './manifest';
export { recordBackup, lastBackup } from './last';
export { BackupService, BACKUP_JOB, staleAfterS, UNSCHEDULED_STALE_S, type BackupPayload } from './scheduled';
