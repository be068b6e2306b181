/** The upload_sessions and upload_parts tables (owner: uploads). Short synchronous statements only. */
import { sql, type ExpressionBuilder } from 'kysely';
import type { DB, Db } from '../db';
import type { UploadPartsTable, UploadSessionsTable } from '../db/tables';

export type SessionRow = UploadSessionsTable;
export type PartRow = Omit<UploadPartsTable, 'upload_id'>;

export class SessionsRepo {
  /**
   * Runs one of this repo's writes, waiting off the event loop while another
   * program holds the database (db/busy.ts); `database_busy` past the wait.
   */
  waitFor<T>(write: () => T, waitMs?: number): Promise<T> {
    return this.db.waits.write(write, { transaction: false, waitMs });
  }

  constructor(private db: Db) {}

  insert(r: SessionRow): void {
    const { id, owner_id, storage_id, path, size, chunk_size, mime, mode, handle, created_at, expires_at } = r;
    this.db.run(
      this.db.k
        .insertInto('upload_sessions')
        .values({ id, owner_id, storage_id, path, size, chunk_size, mime, mode, handle, state: 'open', created_at, expires_at }),
    );
  }

  /** The session, or undefined when unknown, finished or aborted. */
  get(id: string): SessionRow | undefined {
    return this.db.first(this.db.k.selectFrom('upload_sessions').selectAll().where('id', '=', id));
  }

  parts(id: string): PartRow[] {
    return this.db.all(this.db.k.selectFrom('upload_parts').select(['part', 'size', 'etag', 'sha256']).where('upload_id', '=', id).orderBy('part'));
  }

  /** Records a stored part; false when the session was aborted or is being finalized meanwhile. */
  putPart(id: string, p: PartRow): boolean {
    // One conditional write: the part row is inserted (or replaced) only while its session is `open`.
    const { k } = this.db;
    const row = k
      .selectNoFrom((eb) => [eb.val(id).as('upload_id'), eb.val(p.part).as('part'), eb.val(p.size).as('size'), eb.val(p.etag).as('etag'), eb.val(p.sha256).as('sha256')])
      .where((eb) => eb.exists(eb.selectFrom('upload_sessions').select(sql.lit(1).as('one')).where('id', '=', id).where('state', '=', 'open')));
    return (
      this.db.run(
        k
          .insertInto('upload_parts')
          .columns(['upload_id', 'part', 'size', 'etag', 'sha256'])
          .expression(row)
          .onConflict((oc) =>
            oc.columns(['upload_id', 'part']).doUpdateSet((eb) => ({ size: eb.ref('excluded.size'), etag: eb.ref('excluded.etag'), sha256: eb.ref('excluded.sha256') })),
          ),
      ) > 0
    );
  }

  dropPart(id: string, part: number): void {
    this.db.run(this.db.k.deleteFrom('upload_parts').where('upload_id', '=', id).where('part', '=', part));
  }

  /**
   * Marks the session as finalizing by instance `by` under a lease until `until` (ms); false when another
   * finalize (or an abort) got there first.
   */
  claim(id: string, by: string, until: number): boolean {
    return this.db.run(this.db.k.updateTable('upload_sessions').set({ state: 'finalizing', finalizing_by: by, finalize_until: until }).where('id', '=', id).where('state', '=', 'open')) > 0;
  }

  /** Extends `by`'s finalize lease; false when the session is no longer its own (taken over, or closed). */
  renew(id: string, by: string, until: number): boolean {
    return this.db.run(this.db.k.updateTable('upload_sessions').set({ finalize_until: until }).where('id', '=', id).where('state', '=', 'finalizing').where('finalizing_by', '=', by)) > 0;
  }

  /** Takes over a finalize whose lease passed before `now` (its instance died); false when it is live or someone else took it. */
  takeOver(id: string, by: string, until: number, now: number): boolean {
    return (
      this.db.run(
        this.db.k
          .updateTable('upload_sessions')
          .set({ finalizing_by: by, finalize_until: until })
          .where('id', '=', id)
          .where('state', '=', 'finalizing')
          .where((eb) => eb.or([eb('finalize_until', 'is', null), eb('finalize_until', '<', now)])),
      ) > 0
    );
  }

  /** Opens `by`'s finalizing session again (its finalize failed, or recovery found its target not whole). */
  release(id: string, by: string): void {
    this.db.run(
      this.db.k.updateTable('upload_sessions').set({ state: 'open', finalizing_by: null, finalize_until: null }).where('id', '=', id).where('finalizing_by', '=', by),
    );
  }

  /** Deletes the session while it is open (an abort never removes a session being finalized). */
  deleteOpen(id: string): boolean {
    return this.db.run(this.db.k.deleteFrom('upload_sessions').where('id', '=', id).where('state', '=', 'open')) > 0;
  }

  delete(id: string): boolean {
    return this.db.run(this.db.k.deleteFrom('upload_sessions').where('id', '=', id)) > 0;
  }

  /** Sessions past `now` (ISO) that no live finalize holds (`nowMs`: the same instant in ms). */
  expired(now: string, nowMs: number): SessionRow[] {
    return this.db.all(this.db.k.selectFrom('upload_sessions').selectAll().where('expires_at', '<', now).where((eb) => this.notLeased(eb, nowMs)).limit(500));
  }

  /** Deletes an expired session unless a live finalize took it meanwhile. */
  deleteExpired(id: string, nowMs: number): boolean {
    return this.db.run(this.db.k.deleteFrom('upload_sessions').where('id', '=', id).where((eb) => this.notLeased(eb, nowMs))) > 0;
  }

  /** Bytes the owner has declared in live sessions (counted against the quota until finalized). */
  inFlight(ownerId: number, now: string): number {
    const r = this.db.first(
      this.db.k
        .selectFrom('upload_sessions')
        .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('size'), sql.lit(0)).as('n'))
        .where('owner_id', '=', ownerId)
        .where('expires_at', '>=', now),
    );
    return r!.n;
  }

  allIds(): Set<string> {
    return new Set(this.db.all(this.db.k.selectFrom('upload_sessions').select('id')).map((r) => r.id));
  }

  /** Marks a finalizing session's bytes as published (the announcement comes next). */
  markPublished(id: string, at: string): void {
    this.db.run(this.db.k.updateTable('upload_sessions').set({ published_at: at }).where('id', '=', id));
  }

  /** Sessions a finalize was working on whose lease passed before `now` (ms; every one with `Infinity`). */
  finalizing(now: number): SessionRow[] {
    const q = this.db.k.selectFrom('upload_sessions').selectAll().where('state', '=', 'finalizing');
    return this.db.all(now === Infinity ? q : q.where((eb) => eb.or([eb('finalize_until', 'is', null), eb('finalize_until', '<', now)])));
  }

  /** Not held by a live finalize at `now` (ms): open, or finalizing under a lease that passed. */
  private notLeased(eb: ExpressionBuilder<DB, 'upload_sessions'>, now: number) {
    return eb.or([eb('state', '=', 'open'), eb('finalize_until', 'is', null), eb('finalize_until', '<', now)]);
  }
}
