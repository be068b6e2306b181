/**
 * Scheduled backups and "back up now": the archive is built in the data
 * folder's staging, then written into the target folder of a storage THROUGH
 * the file service (the write gate catalogues, audits and announces it like
 * any write), as the system actor `backup`. After each backup the target
 * keeps the newest `keep` archives; older ones are deleted through the file
 * service too (into the storage's trash where it keeps one).
 */
import { DEFAULT_TENANT } from '../db';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { systemActor } from '../auth';
import type { BackupFile, BackupSettings, BackupsView, LastBackup } from '../contract';
import { AppError, validation } from '../errors';
import type { FileService } from '../files';
import { armCron, checkCron, nextRun, parseCron, type JobContext, type JobQueue, type Scheduler } from '../jobs';
import { parseUiPath } from '../lib/paths';
import type { SettingsStore } from '../settings';
import { BACKUP_NAME, writeBackupFile, type BackupSources } from './create';
import { lastBackup, recordBackup } from './last';

export interface BackupPayload {
  trigger: 'schedule' | 'manual';
}

declare module '../jobs/types' {
  interface JobPayloads {
    'backup.run': BackupPayload;
  }
}

const BACKUP_JOB = 'backup.run';
const SCHEDULE = 'backup';
const DAY_S = 86_400;
/** With no schedule, Admin → Status turns amber when the last backup is older than this. */
const UNSCHEDULED_STALE_S = 8 * DAY_S;

export interface BackupDeps {
  sources: BackupSources;
  settings: SettingsStore;
  files: FileService;
  queue: JobQueue;
  log: (msg: string, err?: unknown) => void;
}

export class BackupService {
  private readonly fa;

  constructor(private d: BackupDeps) {
    this.fa = d.files.forActor(systemActor('backup'));
  }

  register(): void {
    // One at a time; a failed backup is not retried blindly (the next schedule or a person tries again).
    this.d.queue.register(BACKUP_JOB, (ctx) => this.run(ctx), { concurrency: 1, maxAttempts: 1, timeoutMs: 6 * 3_600_000, governed: 'io', keepsAwake: true });
  }

  settings(): BackupSettings {
    return { cron: this.d.settings.get('backup_cron'), keep: this.d.settings.get('backup_keep'), target: this.d.settings.get('backup_target') };
  }

  /**
   * Checks every given field (`validation_failed` naming it: a cron croner refuses, keep out of 1..1000,
   * a target that is no folder path) before storing any; returns the changes made.
   */
  async update(input: Partial<BackupSettings>): Promise<Record<string, { from: unknown; to: unknown }>> {
    const next: Partial<BackupSettings> = {};
    if (input.cron !== undefined) next.cron = checkCron(input.cron, 'cron', true);
    if (input.keep !== undefined) next.keep = this.d.settings.check('backup_keep', input.keep);
    if (input.target !== undefined) next.target = this.checkTarget(input.target);
    const now = this.settings();
    if ({ ...now, ...next }.cron && !{ ...now, ...next }.target) throw validation('target', 'choose a target folder before a schedule');
    const changes: Record<string, { from: unknown; to: unknown }> = {};
    for (const k of ['cron', 'keep', 'target'] as const) {
      if (next[k] === undefined || next[k] === now[k]) continue;
      await this.d.settings.set(`backup_${k}`, next[k] as never);
      changes[k] = { from: now[k], to: next[k] };
    }
    return changes;
  }

  /** Queues a backup (one at a time: a queued one absorbs the request); `validation_failed` on `target` when none is set. */
  async request(trigger: BackupPayload['trigger'], ownerId: number | null = null): Promise<string> {
    if (!this.settings().target) throw validation('target', 'choose a target folder first');
    return this.d.queue.enqueue(BACKUP_JOB, { trigger }, { tenant: DEFAULT_TENANT, dedupKey: BACKUP_JOB, ownerId, visible: ownerId !== null });
  }

  /** (Re)arms the schedule from the setting, now and on every change (server only). */
  schedule(scheduler: Scheduler): void {
    const arm = () => armCron(scheduler, SCHEDULE, this.d.settings.get('backup_cron'), () => this.settings().target && this.request('schedule'), this.d.log);
    arm();
    this.d.settings.onChange((k) => {
      if (k === 'backup_cron' || k === 'backup_target') arm();
    });
  }

  /** The settings, the archives in the target (newest first), and how old the last backup is. */
  async view(now = Date.now()): Promise<BackupsView> {
    const settings = this.settings();
    let backups: BackupFile[] = [];
    let listError: string | null = null;
    if (settings.target) {
      try {
        backups = await this.list(settings.target);
      } catch (e) {
        listError = e instanceof AppError ? e.code : (e as Error).message;
      }
    }
    const last = await lastBackup(this.d.sources.db.meta);
    const age = last ? Math.max(0, Math.round((now - Date.parse(last.at)) / 1000)) : null;
    const staleAfter = staleAfterS(settings.cron, now);
    return { settings, backups, last, age_s: age, stale_after_s: staleAfter, stale: age === null || age > staleAfter, list_error: listError };
  }

  private async list(target: string): Promise<BackupFile[]> {
    const out: BackupFile[] = [];
    for await (const e of this.fa.entries(target)) {
      if (e.type === 'file' && BACKUP_NAME.test(e.name))
        out.push({ name: e.name, path: `${target}/${e.name}`, size: e.size, mtime: new Date(e.mtime).toISOString() });
    }
    return out.sort((a, b) => (a.name < b.name ? 1 : -1));
  }

  private async run(ctx: JobContext<BackupPayload>): Promise<LastBackup> {
    const target = this.settings().target;
    if (!target) throw validation('target', 'choose a target folder first');
    const scratch = await mkdtemp(join(this.d.sources.dirs.staging, 'backup-out-'));
    try {
      const made = await writeBackupFile(this.d.sources, scratch, ctx.signal);
      ctx.progress(0.5);
      const name = made.file.slice(scratch.length + 1);
      await this.fa.ensureFolder(target);
      await this.fa.write(`${target}/${name}`, createReadStream(made.file, { highWaterMark: 1 << 20 }), {
        size: made.bytes,
        mime: 'application/zip',
        overwrite: false,
        version: false,
        origin: 'backup',
        audit: 'backup.create',
        signal: ctx.signal,
      });
      const rec: LastBackup = { at: new Date().toISOString(), file: name, where: target, bytes: made.bytes, trigger: ctx.payload.trigger };
      await recordBackup(this.d.sources.db.meta, rec);
      await this.prune(target);
      return rec;
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }

  /** Deletes the archives past the newest `keep` in the target; a failed delete is logged, the backup stands. */
  private async prune(target: string): Promise<void> {
    const old = (await this.list(target)).slice(this.settings().keep);
    if (!old.length) return;
    const r = await this.fa.delete(old.map((b) => b.path));
    for (const f of r.failed) this.d.log(`could not delete the old backup ${f.path}: ${f.error}`);
  }

  private checkTarget(raw: string): string {
    const path = raw.trim().replace(/\/+$/, '');
    if (path === '') return '';
    try {
      const p = parseUiPath(path);
      if (!p.rel) throw validation('target', 'a folder inside a storage, not the storage itself');
      this.fa.target(path, 'editor');
    } catch (e) {
      if (e instanceof AppError && e.code === 'validation_failed') throw e;
      throw validation('target', `a folder path in a storage (/Storage/folder): ${e instanceof AppError ? e.code : (e as Error).message}`);
    }
    return path;
  }
}

/** Twice the schedule's interval (two fires from now), or 8 days with no (or an unreadable) schedule. */
function staleAfterS(cron: string, now = Date.now()): number {
  if (!cron.trim()) return UNSCHEDULED_STALE_S;
  try {
    const spec = parseCron(cron);
    const a = nextRun(spec, new Date(now));
    const b = nextRun(spec, a);
    return Math.round((2 * (b.getTime() - a.getTime())) / 1000);
  } catch {
    return UNSCHEDULED_STALE_S;
  }
}
