/** The upload_sessions and upload_parts tables (owner: uploads). Short synchronous statements only. */
import { sql } from 'kysely';
import type { Db } from '../db';
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

  /** Marks the session as finalizing; false when another finalize (or an abort) got there first. */
  claim(id: string): boolean {
    return this.db.run(this.db.k.updateTable('upload_sessions').set({ state: 'finalizing' }).where('id', '=', id).where('state', '=', 'open')) > 0;
  }

  release(id: string): void {
    this.db.run(this.db.k.updateTable('upload_sessions').set({ state: 'open' }).where('id', '=', id));
  }

  delete(id: string): boolean {
    return this.db.run(this.db.k.deleteFrom('upload_sessions').where('id', '=', id)) > 0;
  }

  expired(now: string): SessionRow[] {
    return this.db.all(this.db.k.selectFrom('upload_sessions').selectAll().where('expires_at', '<', now).limit(500));
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

  /** Sessions a finalize was working on (left so by a crash when read at start). */
  finalizing(): SessionRow[] {
    return this.db.all(this.db.k.selectFrom('upload_sessions').selectAll().where('state', '=', 'finalizing'));
  }
}
