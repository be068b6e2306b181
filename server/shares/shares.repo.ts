/**
 * The shares, drop_submissions and drop_files tables (owner: shares). Every
 * counter changes through one conditional UPDATE, so better-sqlite3's
 * serialised statements make caps and the PIN counter exact under any
 * concurrency without a transaction held across I/O.
 */
import type { Db } from '../db';
import type { SharesTable, DropSubmissionsTable, DropFilesTable } from '../db/tables';

/**
 * A share as the service sees it: `kind` is `app` for a link an app opened (stored as kind `link` with
 * `plugin_name` set: the column's CHECK predates app links; migration 20261127150000-share-app-pages).
 */
export type ShareRow = Omit<SharesTable, 'kind'> & { kind: 'link' | 'drop' | 'app' };
/** The one place a stored row becomes a ShareRow. */
const asRow = (r: SharesTable | undefined): ShareRow | undefined => (r && r.plugin_name !== null ? { ...r, kind: 'app' } : r);
const asRows = (rs: SharesTable[]): ShareRow[] => rs.map((r) => asRow(r)!);
export type SubmissionRow = DropSubmissionsTable;
export type DropFileRow = DropFilesTable;

export type NewShare = Omit<ShareRow, 'id' | 'downloads' | 'uploads' | 'pin_fails' | 'locked_until' | 'revoked_at' | 'suspended_at' | 'suspended_reason' | 'plugin_name' | 'page_id' | 'title' | 'app_files'>
  & Partial<Pick<ShareRow, 'plugin_name' | 'page_id' | 'title' | 'app_files'>>;

/** Filters of the admin's list of app links. */
export interface AppLinkFilter { plugin?: string; active?: boolean; nowIso: string; limit: number; offset: number }

export class SharesRepo {
  constructor(private db: Db) {}

  insert(s: NewShare): number {
    return Number(
      this.db.sqlite
        .prepare(
          `INSERT INTO shares (token, kind, owner_id, storage_id, rel, is_dir, ttl, expires_at, expiry_clamped, max_downloads, max_uploads, pin_hash, comment, drop_settings, created_at, plugin_name, page_id, title, app_files)
           VALUES (@token, @kind, @owner_id, @storage_id, @rel, @is_dir, @ttl, @expires_at, @expiry_clamped, @max_downloads, @max_uploads, @pin_hash, @comment, @drop_settings, @created_at, @plugin_name, @page_id, @title, @app_files)`,
        )
        .run({
          ...s, kind: s.kind === 'app' ? 'link' : s.kind,
          plugin_name: s.plugin_name ?? null, page_id: s.page_id ?? null, title: s.title ?? null, app_files: s.app_files ?? null,
        }).lastInsertRowid,
    );
  }

  byId(id: number): ShareRow | undefined {
    return asRow(this.db.sqlite.prepare('SELECT * FROM shares WHERE id = ?').get(id) as SharesTable | undefined);
  }

  byToken(token: string): ShareRow | undefined {
    return asRow(this.db.sqlite.prepare('SELECT * FROM shares WHERE token = ?').get(token) as SharesTable | undefined);
  }

  /** The owner's shares, newest first (all shares when `ownerId` is null). */
  list(ownerId: number | null, limit = 1000): ShareRow[] {
    if (ownerId === null) return asRows(this.db.sqlite.prepare('SELECT * FROM shares ORDER BY id DESC LIMIT ?').all(limit) as SharesTable[]);
    return asRows(this.db.sqlite.prepare('SELECT * FROM shares WHERE owner_id = ? ORDER BY id DESC LIMIT ?').all(ownerId, limit) as SharesTable[]);
  }

  /**
   * App links, newest first, with the total: of one app when `plugin` is given; `active` true keeps links
   * live by the clock and not revoked (false: the others). The creator and app checks are the caller's.
   */
  appLinks(f: AppLinkFilter): { rows: ShareRow[]; total: number } {
    const where = ['plugin_name IS NOT NULL'];
    const args: Record<string, unknown> = {};
    if (f.plugin !== undefined) {
      where.push('plugin_name = @plugin');
      args.plugin = f.plugin;
    }
    const live = 'revoked_at IS NULL AND (expires_at IS NULL OR expires_at > @now) AND (max_downloads IS NULL OR downloads < max_downloads)';
    if (f.active !== undefined) {
      where.push(f.active ? `(${live})` : `NOT (${live})`);
      args.now = f.nowIso;
    }
    const w = where.join(' AND ');
    const total = (this.db.sqlite.prepare(`SELECT count(*) AS n FROM shares WHERE ${w}`).get(args) as { n: number }).n;
    const rows = asRows(this.db.sqlite.prepare(`SELECT * FROM shares WHERE ${w} ORDER BY id DESC LIMIT @limit OFFSET @offset`).all({ ...args, limit: f.limit, offset: f.offset }) as SharesTable[]);
    return { rows, total };
  }

  /** Folder links that may still be opened (for the ZIP warmer); state checks beyond the clock are the caller's. */
  activeFolderLinks(nowIso: string): ShareRow[] {
    return this.db.sqlite
      .prepare("SELECT * FROM shares WHERE kind = 'link' AND plugin_name IS NULL AND is_dir = 1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?) AND (max_downloads IS NULL OR downloads < max_downloads)")
      .all(nowIso) as ShareRow[];
  }

  /** Suspends a link (the uplink guard); false when already suspended or missing. */
  suspend(id: number, reason: 'addresses' | 'accelerator', nowIso: string): boolean {
    return this.db.sqlite.prepare('UPDATE shares SET suspended_at = ?, suspended_reason = ? WHERE id = ? AND suspended_at IS NULL').run(nowIso, reason, id).changes === 1;
  }

  /** Lifts a suspension; false when the link was not suspended. */
  resume(id: number): boolean {
    return this.db.sqlite.prepare('UPDATE shares SET suspended_at = NULL, suspended_reason = NULL WHERE id = ? AND suspended_at IS NOT NULL').run(id).changes === 1;
  }

  /** Live links suspended now (for the admin status). */
  suspendedCount(): number {
    return (this.db.sqlite.prepare('SELECT count(*) AS n FROM shares WHERE suspended_at IS NOT NULL AND revoked_at IS NULL').get() as { n: number }).n;
  }

  /** Revokes: expiry set to now and `revoked_at` written. False when already revoked or missing. */
  revoke(id: number, nowIso: string): boolean {
    return this.db.sqlite.prepare('UPDATE shares SET revoked_at = @now, expires_at = CASE WHEN expires_at IS NULL OR expires_at > @now THEN @now ELSE expires_at END WHERE id = @id AND revoked_at IS NULL').run({ id, now: nowIso }).changes === 1;
  }

  /**
   * Claims one download slot when the link is live by the clock and under its
   * cap. True when the slot is the caller's; one statement, so exact.
   */
  claimDownload(id: number, nowIso: string): boolean {
    return this.db.sqlite
      .prepare('UPDATE shares SET downloads = downloads + 1 WHERE id = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?) AND (max_downloads IS NULL OR downloads < max_downloads)')
      .run(id, nowIso).changes === 1;
  }

  /** Gives back a slot whose serve failed before its first byte. */
  releaseDownload(id: number): void {
    this.db.sqlite.prepare('UPDATE shares SET downloads = downloads - 1 WHERE id = ? AND downloads > 0').run(id);
  }

  /** Claims one received-file slot against `max_uploads`; exact like downloads. */
  claimUpload(id: number): boolean {
    return this.db.sqlite.prepare('UPDATE shares SET uploads = uploads + 1 WHERE id = ? AND (max_uploads IS NULL OR uploads < max_uploads)').run(id).changes === 1;
  }

  releaseUpload(id: number): void {
    this.db.sqlite.prepare('UPDATE shares SET uploads = uploads - 1 WHERE id = ? AND uploads > 0').run(id);
  }

  /**
   * Records a wrong PIN: the counter rises and, at `max`, the row locks until
   * `lockUntilIso` and the counter restarts. Returns the row after the change.
   */
  pinFailed(id: number, max: number, lockUntilIso: string): ShareRow {
    this.db.sqlite
      .prepare('UPDATE shares SET pin_fails = CASE WHEN pin_fails + 1 >= @max THEN 0 ELSE pin_fails + 1 END, locked_until = CASE WHEN pin_fails + 1 >= @max THEN @until ELSE locked_until END WHERE id = @id')
      .run({ id, max, until: lockUntilIso });
    return this.byId(id)!;
  }

  pinPassed(id: number): void {
    this.db.sqlite.prepare('UPDATE shares SET pin_fails = 0, locked_until = NULL WHERE id = ? AND (pin_fails != 0 OR locked_until IS NOT NULL)').run(id);
  }

  /** Deletes links revoked or expired before `beforeIso` (with their submissions). Returns the ids removed. */
  /** Whether `token` named a link (of `kind`, when given) whose storage was deleted since. */
  tombstoned(token: string, kind?: ShareRow['kind']): boolean {
    const row = this.db.sqlite.prepare('SELECT kind FROM share_tombstones WHERE token = ?').get(token) as { kind: string } | undefined;
    // An app link's tombstone says `link` (the stored kind).
    return !!row && (!kind || row.kind === (kind === 'app' ? 'link' : kind));
  }

  sweep(beforeIso: string): number[] {
    const rows = this.db.sqlite
      .prepare('SELECT id FROM shares WHERE (revoked_at IS NOT NULL AND revoked_at < @b) OR (expires_at IS NOT NULL AND expires_at < @b)')
      .all({ b: beforeIso }) as Array<{ id: number }>;
    const del = this.db.sqlite.prepare('DELETE FROM shares WHERE id = ?');
    this.db.sqlite.transaction(() => {
      rows.forEach((r) => del.run(r.id));
      this.db.sqlite.prepare('DELETE FROM share_tombstones WHERE created_at < ?').run(beforeIso);
    })();
    return rows.map((r) => r.id);
  }

  insertSubmission(s: Omit<SubmissionRow, 'files' | 'finished_at'>): void {
    this.db.sqlite.prepare('INSERT INTO drop_submissions (id, share_id, folder, uploader, ip, has_note, created_at) VALUES (@id, @share_id, @folder, @uploader, @ip, @has_note, @created_at)').run(s);
  }

  /** Per file request of `ownerId`: its submissions that received at least one file (the "Uses" of a file request). */
  submissionCounts(ownerId: number): Map<number, number> {
    const rows = this.db.sqlite
      .prepare(
        `SELECT s.share_id, count(*) AS n FROM drop_submissions s JOIN shares sh ON sh.id = s.share_id
         WHERE sh.owner_id = ? AND EXISTS (SELECT 1 FROM drop_files f WHERE f.submission_id = s.id AND f.done = 1) GROUP BY s.share_id`,
      )
      .all(ownerId) as Array<{ share_id: number; n: number }>;
    return new Map(rows.map((r) => [r.share_id, Number(r.n)]));
  }

  submission(id: string): SubmissionRow | undefined {
    return this.db.sqlite.prepare('SELECT * FROM drop_submissions WHERE id = ?').get(id) as SubmissionRow | undefined;
  }

  /** Reserves a file slot of a submission under `max` files; false when it is full. */
  addSubmissionFile(submissionId: string, max: number, f: Omit<DropFileRow, 'submission_id' | 'done' | 'position'>): boolean {
    const s = this.db.sqlite;
    return s.transaction(() => {
      if (s.prepare('UPDATE drop_submissions SET files = files + 1 WHERE id = ? AND files < ? AND finished_at IS NULL').run(submissionId, max).changes !== 1) return false;
      s.prepare('INSERT INTO drop_files (upload_id, submission_id, name, size, position) SELECT ?, ?, ?, ?, files FROM drop_submissions WHERE id = ?').run(f.upload_id, submissionId, f.name, f.size, submissionId);
      return true;
    })();
  }

  dropFile(uploadId: string): DropFileRow | undefined {
    return this.db.sqlite.prepare('SELECT * FROM drop_files WHERE upload_id = ?').get(uploadId) as DropFileRow | undefined;
  }

  submissionFiles(submissionId: string): DropFileRow[] {
    return this.db.sqlite.prepare('SELECT * FROM drop_files WHERE submission_id = ? ORDER BY position, name').all(submissionId) as DropFileRow[];
  }

  markFileDone(uploadId: string): void {
    this.db.sqlite.prepare('UPDATE drop_files SET done = 1 WHERE upload_id = ?').run(uploadId);
  }

  /** Closes a submission once; false when it was already finished. */
  finishSubmission(id: string, nowIso: string): boolean {
    return this.db.sqlite.prepare('UPDATE drop_submissions SET finished_at = ? WHERE id = ? AND finished_at IS NULL').run(nowIso, id).changes === 1;
  }

  /** Unfinished submissions opened before `beforeIso` (the uploader left without saying so). */
  staleSubmissions(beforeIso: string): SubmissionRow[] {
    return this.db.sqlite.prepare('SELECT * FROM drop_submissions WHERE finished_at IS NULL AND created_at < ? LIMIT 500').all(beforeIso) as SubmissionRow[];
  }

  /** Names already used in a submission (to keep every file's name unique there). */
  namesIn(submissionId: string): Set<string> {
    return new Set((this.db.sqlite.prepare('SELECT name FROM drop_files WHERE submission_id = ?').all(submissionId) as Array<{ name: string }>).map((r) => r.name.toLowerCase()));
  }
}
