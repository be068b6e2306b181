/**
 * Backups of Filedock itself: one archive holding the database copy, the
 * secret key and the settings kept outside the database, made by the CLI,
 * on a schedule or on request, and restored into an empty data folder.
 */
export { writeBackupFile, type BackupSources } from './create';
export { restoreBackup, verifyBackup, RestoreRefused } from './restore';
export type { Manifest, ManifestEntry } from './manifest';
export { recordBackup } from './last';
export { BackupService } from './scheduled';
