/**
 * The shares, share_tombstones, drop_submissions and drop_files tables (owner: shares), on `db.async`. Every
 * counter changes through one conditional UPDATE (or one unit of work that starts with it), so caps, the PIN
 * counter and a submission's file slots stay exact however requests and instances interleave, and no
 * transaction is held across I/O. A write answers with `RETURNING`, which is also how it tells whether it
 * changed a row. Every statement names its tenant (docs/tenants.md): a share is written in its owner's
 * tenant and found, changed and counted only within one, so another tenant's id or token is not found; its
 * submissions and their files carry the share's tenant (callers pass the share row as the scope).
 */
import { withinLimit, type Db, type TenantScope } from '../db';
import { tenantOverQuota } from '../auth';
import type { Tx } from '../db/async';
import type { SharesTable, DropSubmissionsTable, DropFilesTable } from '../db/tables';
import type { StorageRef } from '../catalogue';

/**
 * A share as the service sees it: `kind` is `app` for a link an app opened (stored as kind `link` with
 * `plugin_name` set: the column's CHECK predates app links; migration 20261127150000-share-app-pages).
 */
export type ShareRow = Omit<SharesTable, 'kind'> & { kind: 'link' | 'drop' | 'app' };

/** A share's storage as the catalogue's statements name it: a share is made only on a storage of its tenant. */
export const shareStorage = (s: Pick<ShareRow, 'storage_id' | 'tenant_id'>): StorageRef => ({ id: s.storage_id, tenant_id: s.tenant_id });
/** The one place a stored row becomes a ShareRow. */
const asRow = (r: SharesTable | undefined): ShareRow | undefined => (r && r.plugin_name !== null ? { ...r, kind: 'app' } : r);
const asRows = (rs: SharesTable[]): ShareRow[] => rs.map((r) => asRow(r)!);
export type SubmissionRow = DropSubmissionsTable;
export type DropFileRow = DropFilesTable;

export type NewShare = Omit<
  ShareRow,
  | 'id'
  | 'tenant_id'
  | 'downloads'
  | 'uploads'
  | 'pin_fails'
  | 'locked_until'
  | 'revoked_at'
  | 'suspended_at'
  | 'suspended_reason'
  | 'plugin_name'
  | 'page_id'
  | 'title'
  | 'app_files'
> &
  Partial<Pick<ShareRow, 'plugin_name' | 'page_id' | 'title' | 'app_files'>>;

/** Filters of the admin's list of app links. */
export interface AppLinkFilter {
  plugin?: string;
  active?: boolean;
  nowIso: string;
  limit: number;
  offset: number;
}

/** A tenant's live links and file requests (by the clock, not revoked): what its `links` quota counts. */
const LIVE_COUNT =
  'SELECT count(*) AS n FROM shares WHERE tenant_id = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?) AND (max_downloads IS NULL OR downloads < max_downloads)';

export class SharesRepo {
  constructor(private db: Db) {}

  /**
   * Stores a new share in `scope` (its owner's tenant); its id, or undefined when its storage is not one of
   * that tenant's (nothing written: a share's storage is in the share's tenant). `links`: the tenant's `links`
   * quota, counted in the same unit (one tenant's inserts one after the other), so two links made at once
   * cannot both take the last place; over it, `quota_exceeded` and nothing written.
   */
  insert(scope: TenantScope, s: NewShare, links: number | null = null): Promise<number | undefined> {
    const db = this.db;
    const now = new Date().toISOString();
    const row = {
      ...s,
      tenant_id: scope.tenant_id,
      kind: s.kind === 'app' ? 'link' : s.kind,
      plugin_name: s.plugin_name ?? null,
      page_id: s.page_id ?? null,
      title: s.title ?? null,
      app_files: s.app_files ?? null,
    };
    return this.db.async.unit(function* (t) {
      // The storage's row is not held: a storage deleted meanwhile cascades the new share away with it.
      const [storage] = yield* t.sql('SELECT 1 AS y FROM storages WHERE id = ? AND tenant_id = ?', [s.storage_id, scope.tenant_id]);
      if (!storage) return undefined;
      if (links !== null) yield* withinLimit(t, db, scope, links, [LIVE_COUNT, [scope.tenant_id, now]], (used) => tenantOverQuota('links', links, used));
      const [made] = yield* t.sql<{ id: number }>(
        `INSERT INTO shares (tenant_id, token, kind, owner_id, storage_id, rel, is_dir, ttl, expires_at, expiry_clamped, max_downloads, max_uploads, pin_hash, comment, drop_settings, created_at, plugin_name, page_id, title, app_files)
         VALUES (@tenant_id, @token, @kind, @owner_id, @storage_id, @rel, @is_dir, @ttl, @expires_at, @expiry_clamped, @max_downloads, @max_uploads, @pin_hash, @comment, @drop_settings, @created_at, @plugin_name, @page_id, @title, @app_files)
         RETURNING id`,
        row,
      );
      return Number(made.id);
    });
  }

  async byId(scope: TenantScope, id: number): Promise<ShareRow | undefined> {
    return asRow((await this.db.async.sql<SharesTable>('SELECT * FROM shares WHERE tenant_id = ? AND id = ?', [scope.tenant_id, id]))[0]);
  }

  /**
   * A share known by id only, in whichever of `tenants` holds it (system work that keeps share ids alone: the
   * ZIP cache's file names). Callers pass every tenant (`TenantsRepo.list()`).
   */
  async byIdAmong(tenants: readonly TenantScope[], id: number): Promise<ShareRow | undefined> {
    if (!tenants.length) return undefined;
    return asRow(
      await this.db.async.first(
        this.db.k
          .selectFrom('shares')
          .selectAll()
          .where(
            'tenant_id',
            'in',
            tenants.map((s) => s.tenant_id),
          )
          .where('id', '=', id),
      ),
    );
  }

  async byToken(scope: TenantScope, token: string): Promise<ShareRow | undefined> {
    return asRow((await this.db.async.sql<SharesTable>('SELECT * FROM shares WHERE tenant_id = ? AND token = ?', [scope.tenant_id, token]))[0]);
  }

  /** The owner's shares, newest first (all the tenant's shares when `ownerId` is null). */
  async list(scope: TenantScope, ownerId: number | null, limit = 1000): Promise<ShareRow[]> {
    if (ownerId === null)
      return asRows(await this.db.async.sql<SharesTable>('SELECT * FROM shares WHERE tenant_id = ? ORDER BY id DESC LIMIT ?', [scope.tenant_id, limit]));
    return asRows(
      await this.db.async.sql<SharesTable>('SELECT * FROM shares WHERE tenant_id = ? AND owner_id = ? ORDER BY id DESC LIMIT ?', [
        scope.tenant_id,
        ownerId,
        limit,
      ]),
    );
  }

  /**
   * App links, newest first, with the total: of one app when `plugin` is given; `active` true keeps links
   * live by the clock and not revoked (false: the others). The creator and app checks are the caller's.
   */
  appLinks(scope: TenantScope, f: AppLinkFilter): Promise<{ rows: ShareRow[]; total: number }> {
    const where = ['plugin_name IS NOT NULL'];
    const args: Record<string, unknown> = { tenant: scope.tenant_id };
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
    return this.db.async.read(function* (t) {
      const [{ n }] = yield* t.sql<{ n: number }>(`SELECT count(*) AS n FROM shares WHERE tenant_id = @tenant AND ${w}`, args);
      const rows = asRows(
        yield* t.sql<SharesTable>(`SELECT * FROM shares WHERE tenant_id = @tenant AND ${w} ORDER BY id DESC LIMIT @limit OFFSET @offset`, {
          ...args,
          limit: f.limit,
          offset: f.offset,
        }),
      );
      return { rows, total: Number(n) };
    });
  }

  /** Folder links that may still be opened (for the ZIP warmer); state checks beyond the clock are the caller's. */
  activeFolderLinks(scope: TenantScope, nowIso: string): Promise<ShareRow[]> {
    return this.db.async.sql<ShareRow>(
      "SELECT * FROM shares WHERE tenant_id = ? AND kind = 'link' AND plugin_name IS NULL AND is_dir = 1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?) AND (max_downloads IS NULL OR downloads < max_downloads)",
      [scope.tenant_id, nowIso],
    );
  }

  /** Suspends a link (the uplink guard); false when already suspended or missing. */
  async suspend(scope: TenantScope, id: number, reason: 'addresses' | 'accelerator', nowIso: string): Promise<boolean> {
    const q = 'UPDATE shares SET suspended_at = ?, suspended_reason = ? WHERE tenant_id = ? AND id = ? AND suspended_at IS NULL RETURNING id';
    return (await this.write(q, [nowIso, reason, scope.tenant_id, id])).length === 1;
  }

  /** Lifts a suspension; false when the link was not suspended. */
  async resume(scope: TenantScope, id: number): Promise<boolean> {
    const q = 'UPDATE shares SET suspended_at = NULL, suspended_reason = NULL WHERE tenant_id = ? AND id = ? AND suspended_at IS NOT NULL RETURNING id';
    return (await this.write(q, [scope.tenant_id, id])).length === 1;
  }

  /** Links (and file requests) live by the clock and not revoked: what the tenant's `links` quota counts. */
  async activeCount(scope: TenantScope, nowIso: string): Promise<number> {
    const [{ n }] = await this.db.async.sql<{ n: number }>(LIVE_COUNT, [scope.tenant_id, nowIso]);
    return Number(n);
  }

  /** Live links suspended now (for the admin status). */
  async suspendedCount(scope: TenantScope): Promise<number> {
    const [{ n }] = await this.db.async.sql<{ n: number }>(
      'SELECT count(*) AS n FROM shares WHERE tenant_id = ? AND suspended_at IS NOT NULL AND revoked_at IS NULL',
      [scope.tenant_id],
    );
    return Number(n);
  }

  /** Revokes: expiry set to now and `revoked_at` written. False when already revoked or missing. */
  async revoke(scope: TenantScope, id: number, nowIso: string): Promise<boolean> {
    return (
      (
        await this.write(
          'UPDATE shares SET revoked_at = @now, expires_at = CASE WHEN expires_at IS NULL OR expires_at > @now THEN @now ELSE expires_at END WHERE tenant_id = @tenant AND id = @id AND revoked_at IS NULL RETURNING id',
          { tenant: scope.tenant_id, id, now: nowIso },
        )
      ).length === 1
    );
  }

  /**
   * Claims one download slot when the link is live by the clock and under its
   * cap. True when the slot is the caller's; one statement, so exact.
   */
  async claimDownload(scope: TenantScope, id: number, nowIso: string): Promise<boolean> {
    const q =
      'UPDATE shares SET downloads = downloads + 1 WHERE tenant_id = ? AND id = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?) AND (max_downloads IS NULL OR downloads < max_downloads) RETURNING id';
    return (await this.write(q, [scope.tenant_id, id, nowIso])).length === 1;
  }

  /** Gives back a slot whose serve failed before its first byte (`waitMs`: how long a held database is waited for). */
  async releaseDownload(scope: TenantScope, id: number, waitMs?: number): Promise<void> {
    await this.write(
      'UPDATE shares SET downloads = downloads - 1 WHERE tenant_id = ? AND id = ? AND downloads > 0 RETURNING id',
      [scope.tenant_id, id],
      waitMs,
    );
  }

  /** Claims one received-file slot against `max_uploads`; exact like downloads. */
  async claimUpload(scope: TenantScope, id: number): Promise<boolean> {
    const q = 'UPDATE shares SET uploads = uploads + 1 WHERE tenant_id = ? AND id = ? AND (max_uploads IS NULL OR uploads < max_uploads) RETURNING id';
    return (await this.write(q, [scope.tenant_id, id])).length === 1;
  }

  async releaseUpload(scope: TenantScope, id: number): Promise<void> {
    await this.write('UPDATE shares SET uploads = uploads - 1 WHERE tenant_id = ? AND id = ? AND uploads > 0 RETURNING id', [scope.tenant_id, id]);
  }

  /**
   * Records a wrong PIN: the counter rises and, at `max`, the row locks until `lockUntilIso` and the counter
   * restarts. A row locked at `nowIso` (another wrong answer locked it meanwhile) counts nothing. Returns
   * the row after the change; one unit, so each of several wrong answers at once sees its own count.
   */
  pinFailed(scope: TenantScope, id: number, max: number, lockUntilIso: string, nowIso: string): Promise<ShareRow> {
    return this.db.async.unit(function* (t) {
      const [after] = yield* t.sql<SharesTable>(
        'UPDATE shares SET pin_fails = CASE WHEN pin_fails + 1 >= @max THEN 0 ELSE pin_fails + 1 END, locked_until = CASE WHEN pin_fails + 1 >= @max THEN @until ELSE locked_until END WHERE tenant_id = @tenant AND id = @id AND (locked_until IS NULL OR locked_until <= @now) RETURNING *',
        { tenant: scope.tenant_id, id, max, until: lockUntilIso, now: nowIso },
      );
      return asRow(after ?? (yield* t.sql<SharesTable>('SELECT * FROM shares WHERE tenant_id = ? AND id = ?', [scope.tenant_id, id]))[0])!;
    });
  }

  /** A right PIN restarts the counter, unless another answer locked the row at `nowIso` meanwhile. */
  async pinPassed(scope: TenantScope, id: number, nowIso: string): Promise<void> {
    await this.write(
      'UPDATE shares SET pin_fails = 0, locked_until = NULL WHERE tenant_id = ? AND id = ? AND (pin_fails != 0 OR locked_until IS NOT NULL) AND (locked_until IS NULL OR locked_until <= ?) RETURNING id',
      [scope.tenant_id, id, nowIso],
    );
  }

  /** Whether `token` named a link of the tenant (of `kind`, when given) whose storage was deleted since. */
  async tombstoned(scope: TenantScope, token: string, kind?: ShareRow['kind']): Promise<boolean> {
    const [row] = await this.db.async.sql<{ kind: string }>('SELECT kind FROM share_tombstones WHERE tenant_id = ? AND token = ?', [scope.tenant_id, token]);
    // An app link's tombstone says `link` (the stored kind).
    return !!row && (!kind || row.kind === (kind === 'app' ? 'link' : kind));
  }

  /**
   * Deletes the tenant's links revoked or expired before `beforeIso` (with their submissions) and its older
   * tombstones. Returns the ids removed.
   */
  async sweep(scope: TenantScope, beforeIso: string): Promise<number[]> {
    const rows = await this.db.async.unit(function* (t) {
      const gone = yield* t.sql<{ id: number }>(
        'DELETE FROM shares WHERE tenant_id = @tenant AND ((revoked_at IS NOT NULL AND revoked_at < @b) OR (expires_at IS NOT NULL AND expires_at < @b)) RETURNING id',
        { tenant: scope.tenant_id, b: beforeIso },
      );
      yield* t.sql('DELETE FROM share_tombstones WHERE tenant_id = ? AND created_at < ?', [scope.tenant_id, beforeIso]);
      return gone;
    });
    return rows.map((r) => Number(r.id));
  }

  /** Opens a submission of `share` (in its tenant). */
  async insertSubmission(share: TenantScope, s: Omit<SubmissionRow, 'files' | 'finished_at' | 'tenant_id'>): Promise<void> {
    await this.write(
      'INSERT INTO drop_submissions (tenant_id, id, share_id, folder, uploader, ip, has_note, created_at) VALUES (@tenant_id, @id, @share_id, @folder, @uploader, @ip, @has_note, @created_at) RETURNING id',
      { ...s, tenant_id: share.tenant_id },
    );
  }

  /** Per file request of `ownerId`: its submissions that received at least one file (the "Uses" of a file request). */
  async submissionCounts(scope: TenantScope, ownerId: number): Promise<Map<number, number>> {
    const rows = await this.db.async.sql<{ share_id: number; n: number }>(
      `SELECT s.share_id, count(*) AS n FROM drop_submissions s JOIN shares sh ON sh.id = s.share_id
       WHERE s.tenant_id = ? AND sh.owner_id = ? AND EXISTS (SELECT 1 FROM drop_files f WHERE f.tenant_id = s.tenant_id AND f.submission_id = s.id AND f.done = 1) GROUP BY s.share_id`,
      [scope.tenant_id, ownerId],
    );
    return new Map(rows.map((r) => [Number(r.share_id), Number(r.n)]));
  }

  async submission(scope: TenantScope, id: string): Promise<SubmissionRow | undefined> {
    return (await this.db.async.sql<SubmissionRow>('SELECT * FROM drop_submissions WHERE tenant_id = ? AND id = ?', [scope.tenant_id, id]))[0];
  }

  /**
   * Reserves a file slot of a submission under `max` files for a file named `f.name`: `full` when the
   * submission has no slot left (or is finished), `taken` when another file of it has that name (case
   * aside), else `added`. One unit: the slot is taken first, which holds the submission's row, so two
   * files racing for the last slot or for one name are decided one after the other.
   */
  async addSubmissionFile(
    scope: TenantScope,
    submissionId: string,
    max: number,
    f: Omit<DropFileRow, 'submission_id' | 'done' | 'position' | 'tenant_id'>,
  ): Promise<'added' | 'full' | 'taken'> {
    const tenant = scope.tenant_id;
    try {
      return await this.db.async.unit(function* (t) {
        const [slot] = yield* t.sql<{ files: number }>(
          'UPDATE drop_submissions SET files = files + 1 WHERE tenant_id = ? AND id = ? AND files < ? AND finished_at IS NULL RETURNING files',
          [tenant, submissionId, max],
        );
        if (!slot) return 'full';
        const names = yield* t.sql<{ name: string }>('SELECT name FROM drop_files WHERE tenant_id = ? AND submission_id = ?', [tenant, submissionId]);
        // Thrown to roll the slot back; answered below.
        if (names.some((r) => r.name.toLowerCase() === f.name.toLowerCase())) throw NAME_TAKEN;
        yield* t.sql('INSERT INTO drop_files (tenant_id, upload_id, submission_id, name, size, position) VALUES (?, ?, ?, ?, ?, ?) RETURNING upload_id', [
          tenant,
          f.upload_id,
          submissionId,
          f.name,
          f.size,
          Number(slot.files),
        ]);
        return 'added';
      });
    } catch (e) {
      if (e === NAME_TAKEN) return 'taken';
      throw e;
    }
  }

  async dropFile(scope: TenantScope, uploadId: string): Promise<DropFileRow | undefined> {
    return (await this.db.async.sql<DropFileRow>('SELECT * FROM drop_files WHERE tenant_id = ? AND upload_id = ?', [scope.tenant_id, uploadId]))[0];
  }

  submissionFiles(scope: TenantScope, submissionId: string): Promise<DropFileRow[]> {
    return this.db.async.sql<DropFileRow>('SELECT * FROM drop_files WHERE tenant_id = ? AND submission_id = ? ORDER BY position, name', [
      scope.tenant_id,
      submissionId,
    ]);
  }

  async markFileDone(scope: TenantScope, uploadId: string): Promise<void> {
    await this.write('UPDATE drop_files SET done = 1 WHERE tenant_id = ? AND upload_id = ? RETURNING upload_id', [scope.tenant_id, uploadId]);
  }

  /** Closes a submission once; false when it was already finished. */
  async finishSubmission(scope: TenantScope, id: string, nowIso: string): Promise<boolean> {
    const q = 'UPDATE drop_submissions SET finished_at = ? WHERE tenant_id = ? AND id = ? AND finished_at IS NULL RETURNING id';
    return (await this.write(q, [nowIso, scope.tenant_id, id])).length === 1;
  }

  /** The tenant's unfinished submissions opened before `beforeIso` (the uploader left without saying so). */
  staleSubmissions(scope: TenantScope, beforeIso: string): Promise<SubmissionRow[]> {
    return this.db.async.sql<SubmissionRow>('SELECT * FROM drop_submissions WHERE tenant_id = ? AND finished_at IS NULL AND created_at < ? LIMIT 500', [
      scope.tenant_id,
      beforeIso,
    ]);
  }

  /** Names already used in a submission, lower-cased (to keep every file's name unique there). */
  async namesIn(scope: TenantScope, submissionId: string): Promise<Set<string>> {
    const rows = await this.db.async.sql<{ name: string }>('SELECT name FROM drop_files WHERE tenant_id = ? AND submission_id = ?', [
      scope.tenant_id,
      submissionId,
    ]);
    return new Set(rows.map((r) => r.name.toLowerCase()));
  }

  /**
   * One write statement with `RETURNING` (its rows tell what changed), as a unit: on SQLite a write that
   * meets a database held by another program waits off the event loop (up to `waitMs`) before `database_busy`.
   */
  private write<R = unknown>(text: string, params: unknown[] | Record<string, unknown>, waitMs?: number): Promise<R[]> {
    return this.db.async.unit((t: Tx) => t.sql<R>(text, params), { waitMs });
  }
}

/** Thrown inside `addSubmissionFile`'s unit to roll its slot back when the name is taken. */
const NAME_TAKEN = new Error('drop file name taken');
