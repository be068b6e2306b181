/**
 * The upload_sessions and upload_parts tables (owner: uploads), on `db.async`. Every decision is one
 * conditional statement or one unit: a session opened within what is left of the owner's quota, a part
 * recorded only while its session is open, a finalize claimed, renewed, taken over or released by its lease
 * holder, an expired session swept once. Every statement names its tenant (docs/tenants.md): a session is
 * written in its owner's, its parts carry it too, and another tenant's session id is as unknown as a missing one.
 */
import { sql, type ExpressionBuilder } from 'kysely';
import type { Compilable } from 'kysely';
import type { DB, Db, TenantScope } from '../db';
import type { UploadPartsTable, UploadSessionsTable } from '../db/tables';

export type SessionRow = UploadSessionsTable;
/** A session to open: its tenant is the scope it is opened in. */
export type NewSession = Omit<SessionRow, 'tenant_id'>;
export type PartRow = Omit<UploadPartsTable, 'upload_id' | 'tenant_id'>;

export class SessionsRepo {
  constructor(private db: Db) {}

  /**
   * Opens a session unless the bytes the owner has declared in live sessions (at `r.created_at`) plus its
   * size exceed `room` (null: no quota); false when they would. Serializable: inits racing for the last
   * room cannot both pass.
   */
  open(s: TenantScope, r: NewSession, room: number | null): Promise<boolean> {
    const { id, owner_id, storage_id, path, size, chunk_size, mime, mode, handle, created_at, expires_at } = r;
    const inFlight = this.inFlightQuery(s, owner_id, created_at);
    const ins = this.db.k
      .insertInto('upload_sessions')
      .values({ tenant_id: s.tenant_id, id, owner_id, storage_id, path, size, chunk_size, mime, mode, handle, state: 'open', created_at, expires_at });
    return this.db.async.unit(
      function* (t) {
        if (room !== null && (yield* t.first(inFlight))!.n + size > room) return false;
        yield* t.run(ins);
        return true;
      },
      { isolation: room === null ? 'read committed' : 'serializable' },
    );
  }

  /** The session, or undefined when unknown, finished, aborted or another tenant's. */
  get(s: TenantScope, id: string): Promise<SessionRow | undefined> {
    return this.db.async.first(this.db.k.selectFrom('upload_sessions').selectAll().where('tenant_id', '=', s.tenant_id).where('id', '=', id));
  }

  parts(s: TenantScope, id: string): Promise<PartRow[]> {
    return this.db.async.all(
      this.db.k
        .selectFrom('upload_parts')
        .select(['part', 'size', 'etag', 'sha256'])
        .where('tenant_id', '=', s.tenant_id)
        .where('upload_id', '=', id)
        .orderBy('part'),
    );
  }

  /**
   * Records a stored part (inserted or replaced); false when the session was aborted or is being finalized
   * meanwhile. One unit that first locks the session row while it is `open` (a no-op update that re-checks
   * its state), so a claim waits for the part, and a finalize that claimed reads it.
   */
  putPart(s: TenantScope, id: string, p: PartRow): Promise<boolean> {
    const k = this.db.k;
    const lock = k.updateTable('upload_sessions').set({ state: 'open' }).where('tenant_id', '=', s.tenant_id).where('id', '=', id).where('state', '=', 'open');
    // The part carries its session's tenant (the lock above found the session in it).
    const put = k
      .insertInto('upload_parts')
      .values({ tenant_id: s.tenant_id, upload_id: id, ...p })
      .onConflict((oc) =>
        oc
          .columns(['upload_id', 'part'])
          .doUpdateSet((eb) => ({ size: eb.ref('excluded.size'), etag: eb.ref('excluded.etag'), sha256: eb.ref('excluded.sha256') })),
      );
    return this.db.async.unit(function* (t) {
      if ((yield* t.run(lock)) === 0) return false;
      yield* t.run(put);
      return true;
    });
  }

  async dropPart(s: TenantScope, id: string, part: number): Promise<void> {
    await this.db.async.run(this.db.k.deleteFrom('upload_parts').where('tenant_id', '=', s.tenant_id).where('upload_id', '=', id).where('part', '=', part));
  }

  /**
   * Marks the session as finalizing by instance `by` under a lease until `until` (ms); false when another
   * finalize (or an abort) got there first.
   */
  async claim(s: TenantScope, id: string, by: string, until: number): Promise<boolean> {
    return (
      (await this.db.async.run(
        this.db.k
          .updateTable('upload_sessions')
          .set({ state: 'finalizing', finalizing_by: by, finalize_until: until })
          .where('tenant_id', '=', s.tenant_id)
          .where('id', '=', id)
          .where('state', '=', 'open'),
      )) > 0
    );
  }

  /** Extends `by`'s finalize lease; false when the session is no longer its own (taken over, or closed). */
  async renew(s: TenantScope, id: string, by: string, until: number): Promise<boolean> {
    return (
      (await this.db.async.run(
        this.db.k
          .updateTable('upload_sessions')
          .set({ finalize_until: until })
          .where('tenant_id', '=', s.tenant_id)
          .where('id', '=', id)
          .where('state', '=', 'finalizing')
          .where('finalizing_by', '=', by),
      )) > 0
    );
  }

  /**
   * Takes over a finalize whose lease passed before `now` (its instance died; any lease with `Infinity`, as
   * `finalizing`); false when it is live or someone else took it.
   */
  async takeOver(s: TenantScope, id: string, by: string, until: number, now: number): Promise<boolean> {
    const q = this.db.k
      .updateTable('upload_sessions')
      .set({ finalizing_by: by, finalize_until: until })
      .where('tenant_id', '=', s.tenant_id)
      .where('id', '=', id)
      .where('state', '=', 'finalizing');
    return (await this.db.async.run(now === Infinity ? q : q.where((eb) => eb.or([eb('finalize_until', 'is', null), eb('finalize_until', '<', now)])))) > 0;
  }

  /**
   * Opens `by`'s finalizing session again (its finalize failed, or recovery found its target not whole).
   * `waitMs`: how long to keep trying a held database.
   */
  async release(s: TenantScope, id: string, by: string, waitMs?: number): Promise<void> {
    await this.write(
      this.db.k
        .updateTable('upload_sessions')
        .set({ state: 'open', finalizing_by: null, finalize_until: null })
        .where('tenant_id', '=', s.tenant_id)
        .where('id', '=', id)
        .where('finalizing_by', '=', by),
      waitMs,
    );
  }

  /** Deletes the session while it is open (an abort never removes a session being finalized). */
  async deleteOpen(s: TenantScope, id: string): Promise<boolean> {
    return (
      (await this.db.async.run(this.db.k.deleteFrom('upload_sessions').where('tenant_id', '=', s.tenant_id).where('id', '=', id).where('state', '=', 'open'))) >
      0
    );
  }

  async delete(s: TenantScope, id: string, waitMs?: number): Promise<boolean> {
    return (await this.write(this.db.k.deleteFrom('upload_sessions').where('tenant_id', '=', s.tenant_id).where('id', '=', id), waitMs)) > 0;
  }

  /**
   * Deletes up to 500 of the tenant's sessions past `now` (ISO) that no live finalize holds (`nowMs`: the
   * same instant in ms) and answers them: each to one caller, so two sweeps discard each session's data once.
   */
  deleteExpired(s: TenantScope, now: string, nowMs: number): Promise<SessionRow[]> {
    const k = this.db.k;
    const due = k
      .selectFrom('upload_sessions')
      .select('id')
      .where('tenant_id', '=', s.tenant_id)
      .where('expires_at', '<', now)
      .where((eb) => this.notLeased(eb, nowMs))
      .limit(500);
    // The conditions again outside the subquery: PostgreSQL re-checks those on a row a claim changed meanwhile.
    const del = k
      .deleteFrom('upload_sessions')
      .where('tenant_id', '=', s.tenant_id)
      .where('id', 'in', due)
      .where('expires_at', '<', now)
      .where((eb) => this.notLeased(eb, nowMs))
      .returningAll();
    return this.db.async.unit(function* (t) {
      return yield* t.all(del);
    });
  }

  /** Bytes the owner (null: the tenant's people) declared in live sessions (counted against the quotas until finalized). */
  async inFlight(s: TenantScope, ownerId: number | null, now: string): Promise<number> {
    return Number((await this.db.async.first(this.inFlightQuery(s, ownerId, now)))!.n);
  }

  /** `ownerId` null: every owner's in the tenant (its quotas). */
  private inFlightQuery(s: TenantScope, ownerId: number | null, now: string) {
    const q = this.db.k
      .selectFrom('upload_sessions')
      .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('size'), sql.lit(0)).as('n'))
      .where('tenant_id', '=', s.tenant_id)
      .where('expires_at', '>=', now);
    return ownerId === null ? q : q.where('owner_id', '=', ownerId);
  }

  /** The ids of the given tenants' sessions (the staging folder is shared: its orphans are no tenant's session). */
  async allIds(tenants: readonly TenantScope[]): Promise<Set<string>> {
    if (tenants.length === 0) return new Set();
    const q = this.db.k
      .selectFrom('upload_sessions')
      .select('id')
      .where(
        'tenant_id',
        'in',
        tenants.map((t) => t.tenant_id),
      );
    return new Set((await this.db.async.all(q)).map((r) => r.id));
  }

  /** Marks a finalizing session's bytes as published (the announcement comes next). */
  async markPublished(s: TenantScope, id: string, at: string, waitMs?: number): Promise<void> {
    await this.write(this.db.k.updateTable('upload_sessions').set({ published_at: at }).where('tenant_id', '=', s.tenant_id).where('id', '=', id), waitMs);
  }

  /** The tenant's sessions a finalize was working on whose lease passed before `now` (ms; every one with `Infinity`). */
  finalizing(s: TenantScope, now: number): Promise<SessionRow[]> {
    const q = this.db.k.selectFrom('upload_sessions').selectAll().where('tenant_id', '=', s.tenant_id).where('state', '=', 'finalizing');
    return this.db.async.all(now === Infinity ? q : q.where((eb) => eb.or([eb('finalize_until', 'is', null), eb('finalize_until', '<', now)])));
  }

  /** One write that keeps trying a held database for `waitMs` (default: the database's wait). */
  private write(q: Compilable<unknown>, waitMs?: number): Promise<number> {
    if (waitMs === undefined) return this.db.async.run(q);
    return this.db.async.unit(
      function* (t) {
        return yield* t.run(q);
      },
      { waitMs },
    );
  }

  /** Not held by a live finalize at `now` (ms): open, or finalizing under a lease that passed. */
  private notLeased(eb: ExpressionBuilder<DB, 'upload_sessions'>, now: number) {
    return eb.or([eb('state', '=', 'open'), eb('finalize_until', 'is', null), eb('finalize_until', '<', now)]);
  }
}
