/** Backups of Filedock itself (docs/operations.md, "Backups of Filedock itself"). */

/** The last backup any door made (CLI, schedule, "back up now"). */
export interface LastBackup {
  /** When it finished (ISO). */
  at: string;
  /** File name of the archive. */
  file: string;
  /** Where it went: a UI path (`/Files/Backups`) or, from the CLI, a local folder. */
  where: string;
  bytes: number;
  trigger: 'cli' | 'schedule' | 'manual';
}

/** Admin → Settings, "Backups" (`GET`/`PATCH /api/admin/backups/settings`). */
export interface BackupSettings {
  /** Cron expression (croner syntax); empty = no scheduled backups. */
  cron: string;
  /** Backups kept in the target folder; older ones are deleted after each scheduled or manual backup. */
  keep: number;
  /** UI path of the target folder in one of the storages (`/Files/Backups`); empty = none chosen yet. */
  target: string;
}

/** One archive in the target folder. */
export interface BackupFile {
  name: string;
  path: string;
  size: number;
  mtime: string;
}

/** `GET /api/admin/backups`: the settings, what the target holds (newest first) and the last backup's age. */
export interface BackupsView {
  settings: BackupSettings;
  backups: BackupFile[];
  last: LastBackup | null;
  /** Seconds since the last backup (null: none yet). */
  age_s: number | null;
  /** Age past which Admin → Status shows the last backup amber: twice the schedule's interval, or 8 days unscheduled. */
  stale_after_s: number;
  stale: boolean;
  /** Why the target folder could not be listed (storage down, folder missing), or null. */
  list_error: string | null;
}
