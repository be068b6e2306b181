/** The upload_sessions and upload_parts tables (owner: uploads). Short synchronous statements only. */
import type { Db } from '../db';
import type { UploadPartsTable, UploadSessionsTable } from '../db/tables';

export type SessionRow = UploadSessionsTable;
export type PartRow = Omit<UploadPartsTable, 'upload_id'>;

export class SessionsRepo {
  private s;
  /**
   * Runs one of this repo's writes, waiting off the event loop while another
   * program holds the database (db/busy.ts); `database_busy` past the wait.
   */
  waitFor<T>(write: () => T, waitMs?: number): Promise<T> {
    return this.db.waits.write(write, { transaction: false, waitMs });
  }

  constructor(private db: Db) {
    const q = (sql: string) => db.sqlite.prepare(sql);
    this.s = {
      insert: q(`INSERT INTO upload_sessions (id, owner_id, storage_id, path, size, chunk_size, mime, mode, handle, state, created_at, expires_at)
                 VALUES (@id, @owner_id, @storage_id, @path, @size, @chunk_size, @mime, @mode, @handle, 'open', @created_at, @expires_at)`),
      get: q('SELECT * FROM upload_sessions WHERE id = ?'),
      parts: q('SELECT part, size, etag, sha256 FROM upload_parts WHERE upload_id = ? ORDER BY part'),
      putPart: q(`INSERT INTO upload_parts (upload_id, part, size, etag, sha256) SELECT @id, @part, @size, @etag, @sha256
                  WHERE EXISTS (SELECT 1 FROM upload_sessions WHERE id = @id AND state = 'open')
                  ON CONFLICT(upload_id, part) DO UPDATE SET size = excluded.size, etag = excluded.etag, sha256 = excluded.sha256`),
      dropPart: q('DELETE FROM upload_parts WHERE upload_id = ? AND part = ?'),
      claim: q("UPDATE upload_sessions SET state = 'finalizing' WHERE id = ? AND state = 'open'"),
      release: q("UPDATE upload_sessions SET state = 'open' WHERE id = ?"),
      delete: q('DELETE FROM upload_sessions WHERE id = ?'),
      expired: q('SELECT * FROM upload_sessions WHERE expires_at < ? LIMIT 500'),
      inFlight: q("SELECT COALESCE(SUM(size), 0) FROM upload_sessions WHERE owner_id = ? AND expires_at >= ?").pluck(),
      ids: q('SELECT id FROM upload_sessions').pluck(),
      published: q('UPDATE upload_sessions SET published_at = ? WHERE id = ?'),
      finalizing: q("SELECT * FROM upload_sessions WHERE state = 'finalizing'"),
    };
  }

  insert(r: SessionRow): void {
    this.s.insert.run(r);
  }

  /** The session, or undefined when unknown, finished or aborted. */
  get(id: string): SessionRow | undefined {
    return this.s.get.get(id) as SessionRow | undefined;
  }

  parts(id: string): PartRow[] {
    return this.s.parts.all(id) as PartRow[];
  }

  /** Records a stored part; false when the session was aborted or is being finalized meanwhile. */
  putPart(id: string, p: PartRow): boolean {
    return this.s.putPart.run({ id, ...p }).changes > 0;
  }

  dropPart(id: string, part: number): void {
    this.s.dropPart.run(id, part);
  }

  /** Marks the session as finalizing; false when another finalize (or an abort) got there first. */
  claim(id: string): boolean {
    return this.s.claim.run(id).changes > 0;
  }

  release(id: string): void {
    this.s.release.run(id);
  }

  delete(id: string): boolean {
    return this.s.delete.run(id).changes > 0;
  }

  expired(now: string): SessionRow[] {
    return this.s.expired.all(now) as SessionRow[];
  }

  /** Bytes the owner has declared in live sessions (counted against the quota until finalized). */
  inFlight(ownerId: number, now: string): number {
    return this.s.inFlight.get(ownerId, now) as number;
  }

  allIds(): Set<string> {
    return new Set(this.s.ids.all() as string[]);
  }

  /** Marks a finalizing session's bytes as published (the announcement comes next). */
  markPublished(id: string, at: string): void {
    this.s.published.run(at, id);
  }

  /** Sessions a finalize was working on (left so by a crash when read at start). */
  finalizing(): SessionRow[] {
    return this.s.finalizing.all() as SessionRow[];
  }

}
