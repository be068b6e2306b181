/** The storages and storage_grants tables (owner: catalogue). */
import { randomBytes } from 'node:crypto';
import type { ChangeChannel, Db, Statement, TenantScope, Tx, Unit } from '../db';
import { driveSync, tx } from '../db/async';
import { reloadOn } from '../db/channel';
import type { StoragesTable } from '../db/tables';

export type StorageRow = Omit<StoragesTable, 'id'> & { id: number };
export interface Grant {
  id: number;
  user_id: number | null;
  group: string | null;
  level: 'viewer' | 'editor';
  /** '' = the whole storage; else a folder (relative path) and everything inside it. */
  path: string;
}
/** What a new storage row takes; the rest has its default. */
export type NewStorage = Omit<StorageRow, 'id' | 'created_at' | 'updated_at' | 'status' | 'status_reason' | 'last_sync_at' | 'volume' | 'ocr' | 'tenant_id'> & {
  ocr?: number;
};

/** The row when it is the tenant's. */
const mine = (s: TenantScope, r: StorageRow | undefined): StorageRow | undefined => (r && r.tenant_id === s.tenant_id ? r : undefined);

export const newUid = (): string => 'st' + randomBytes(8).toString('hex');

/** SQLite's NOCASE folds ASCII letters only. */
const asciiLower = (s: string): string => s.replace(/[A-Z]+/g, (m) => m.toLowerCase());

interface GrantRow {
  id: number;
  storage_id: number;
  tenant_id: number;
  user_id: number | null;
  group_name: string | null;
  level: 'viewer' | 'editor';
  path: string;
}

interface Snapshot {
  byId: Map<number, StorageRow>;
  /** Keyed by tenant and name: a name is unique per tenant (`nameKey`). */
  byName: Map<string, StorageRow>;
  /** By name as written: the usual spelling of a path needs no case folding. */
  byExact: Map<string, StorageRow>;
  /** A uid is random and unique across the installation (drivers and the meter know a storage by it alone). */
  byUid: Map<string, StorageRow>;
  /** Each tenant's storages, in id order. */
  byTenant: Map<number, StorageRow[]>;
  /** Each tenant's grants by storage (a grant is in its storage's tenant). */
  grants: Map<number, Map<number, Grant[]>>;
}

const nameKey = (tenant: number, name: string): string => `${tenant}/${name}`;
const NO_GRANTS: ReadonlyMap<number, Grant[]> = new Map();

/**
 * Every row of both tables, of every tenant: the copy is read in one go (a handful of storages, their
 * grants) and every read from it takes a tenant; system work and the root guard across tenants read all.
 */
function* readAll(t: Tx): Unit<{ rows: StorageRow[]; grants: GrantRow[] }> {
  const rows = yield* t.sql<StorageRow>('SELECT * FROM storages ORDER BY tenant_id, id');
  const grants = yield* t.sql<GrantRow>('SELECT id, storage_id, tenant_id, user_id, group_name, level, path FROM storage_grants ORDER BY tenant_id, id');
  return { rows, grants };
}

/** Rows are frozen: every caller shares them. */
function build(d: { rows: StorageRow[]; grants: GrantRow[] }): Snapshot {
  const snap: Snapshot = { byId: new Map(), byName: new Map(), byExact: new Map(), byUid: new Map(), byTenant: new Map(), grants: new Map() };
  for (const r of d.rows) {
    const row = Object.freeze({ ...r, id: Number(r.id), tenant_id: Number(r.tenant_id) });
    snap.byId.set(row.id, row);
    snap.byName.set(nameKey(row.tenant_id, asciiLower(row.name)), row);
    snap.byExact.set(nameKey(row.tenant_id, row.name), row);
    snap.byUid.set(row.uid, row);
    (snap.byTenant.get(row.tenant_id) ?? snap.byTenant.set(row.tenant_id, []).get(row.tenant_id)!).push(row);
  }
  for (const g of d.grants) {
    const sid = Number(g.storage_id);
    const tenant = Number(g.tenant_id);
    // A grant counts only in its storage's tenant (the writes below never make another kind).
    if (snap.byId.get(sid)?.tenant_id !== tenant) continue;
    const mine = snap.grants.get(tenant) ?? snap.grants.set(tenant, new Map()).get(tenant)!;
    const list = mine.get(sid) ?? mine.set(sid, []).get(sid)!;
    list.push(Object.freeze({ id: Number(g.id), user_id: g.user_id === null ? null : Number(g.user_id), group: g.group_name, level: g.level, path: g.path }));
  }
  for (const mine of snap.grants.values()) for (const list of mine.values()) Object.freeze(list);
  return snap;
}

/** Whether storage `id` and every person of `users` are tenant `s`'s (a grant joins only its own tenant's). */
function* ownTenant(t: Tx, s: TenantScope, id: number, users: Array<number | null>): Unit<boolean> {
  if (!(yield* t.sql('SELECT 1 FROM storages WHERE tenant_id = ? AND id = ?', [s.tenant_id, id])).length) return false;
  const people = [...new Set(users.filter((u): u is number => u !== null))];
  if (!people.length) return true;
  const [{ n }] = yield* t.sql<{ n: number | string }>(`SELECT count(*) AS n FROM users WHERE tenant_id = ? AND id IN (${people.map(() => '?').join(', ')})`, [
    s.tenant_id,
    ...people,
  ]);
  return Number(n) === people.length;
}

/** The change notice between instances (PostgreSQL): "the storages or their grants changed, read them again". */
const NOTICE = 'storages';
/** A name is taken when another storage of the tenant has it as its name or as its uid (both address a storage). */
const TAKEN = 'SELECT 1 FROM storages WHERE tenant_id = ? AND (name = ? OR uid = ?) AND id != ?';

/**
 * The storages and their grants, kept in memory: every file request resolves a storage and its grants, so
 * reads (`all`, `byId`, `byNameOrUid`, `grants`…) answer synchronously from a copy, never a statement.
 * `load()` reads it once at start; every write here is awaited and re-reads it before it resolves (and tells
 * the other instances). What changed elsewhere:
 * - SQLite: the database layer's write counter (`db.writes()`: a write on this connection outside these
 *   methods, e.g. a person's grants going with the person by cascade; a property read, where asking SQLite's
 *   `total_changes()` cost a statement, ~6.5 µs, on every file request) and `PRAGMA data_version` (another
 *   process committed, e.g. a CLI command; asked at most once a millisecond) move; the copy is re-read there
 *   and then, synchronously.
 * - PostgreSQL: a notice from another instance (or `resync` after the channel came back) re-reads it
 *   asynchronously (PostgreSQL has no `db.sqlite`).
 */
export class StoragesRepo {
  private snap = build({ rows: [], grants: [] });
  private channel: ChangeChannel | null = null;
  /** Re-reads are numbered: an older one that answers late never replaces a newer copy. */
  private started = 0;
  private applied = 0;
  /** SQLite only: the statements, and the counters at the last re-read. */
  private lite?: { version: Statement; reads: Map<string, Statement> };
  private seen = { writes: -1, version: -1, at: -Infinity };
  private statusQueue = new Map<number, Promise<void>>();

  constructor(private db: Db) {}

  /** Reads the copy (awaited where the repository is built, before the first request). */
  async load(): Promise<void> {
    await this.reload();
  }

  /** Re-reads the copy (at start, after a write here, on another instance's notice). */
  private async reload(): Promise<void> {
    if (this.db.dialect === 'sqlite') {
      this.seen.writes = -1;
      this.followSqlite();
      return;
    }
    const n = ++this.started;
    this.apply(n, await this.db.async.read(readAll));
  }

  /** Hears the other instances' writes (PostgreSQL) and tells them of this one's. */
  attachChannel(channel: ChangeChannel): void {
    this.channel = channel;
    // A failed re-read keeps the copy; the next notice, write or resync reads again.
    reloadOn(channel, [NOTICE], () => this.reload());
  }

  private apply(n: number, d: { rows: StorageRow[]; grants: GrantRow[] }): void {
    if (n < this.applied) return;
    this.applied = n;
    this.snap = build(d);
  }

  private current(): Snapshot {
    if (this.db.dialect === 'sqlite') this.followSqlite();
    return this.snap;
  }

  /**
   * SQLite only: `db.sqlite` is the in-process better-sqlite3 handle there (no round trip), so
   * asking its counters and re-reading at once keeps every read synchronous and current.
   */
  private followSqlite(): void {
    const s = this.db.sqlite!; // called on SQLite only
    const q = (this.lite ??= { version: s.prepare('PRAGMA data_version').pluck(), reads: new Map() });
    const writes = this.db.writes!();
    const now = performance.now();
    // Another process's commit has no ordering with our requests: its counter is asked at most once a millisecond.
    if (writes === this.seen.writes && now - this.seen.at < 1) return;
    const version = q.version.get() as number;
    this.seen.at = now;
    if (writes === this.seen.writes && version === this.seen.version) return;
    this.seen.writes = writes;
    this.seen.version = version;
    const read = (text: string) => q.reads.get(text) ?? q.reads.set(text, s.prepare(text)).get(text)!;
    this.apply(
      ++this.started,
      driveSync(readAll(tx), (step) => read((step as { text: string }).text).all()),
    );
  }

  /** After a write here committed: the copy is re-read before the write resolves, and the other instances are told. */
  private async changed(): Promise<void> {
    await this.reload();
    this.channel?.publish(NOTICE, null);
  }

  /** The tenant's storages, in id order. */
  all(s: TenantScope): StorageRow[] {
    return [...(this.current().byTenant.get(s.tenant_id) ?? [])];
  }

  /** The tenant's storage `id`; undefined when missing or another tenant's. */
  byId(s: TenantScope, id: number): StorageRow | undefined {
    return mine(s, this.current().byId.get(id));
  }

  /** The tenant's storage with uid `uid`; undefined when missing or another tenant's. */
  byUid(s: TenantScope, uid: string): StorageRow | undefined {
    return mine(s, this.current().byUid.get(uid));
  }

  /** The tenant's storage by name (case-insensitive) or by uid: both address a storage everywhere. */
  byNameOrUid(s: TenantScope, key: string): StorageRow | undefined {
    const snap = this.current();
    return mine(s, snap.byUid.get(key)) ?? snap.byExact.get(nameKey(s.tenant_id, key)) ?? snap.byName.get(nameKey(s.tenant_id, asciiLower(key)));
  }

  /** Whether another storage of the tenant has `name` as its name or uid (a form's early answer; `insert`/`update` decide). */
  nameTaken(s: TenantScope, name: string, exceptId = -1): boolean {
    const other = this.byNameOrUid(s, name);
    return !!other && other.id !== exceptId;
  }

  /**
   * System work only (the syncer, volumes, the meter, the driver pool, the root guard across tenants):
   * every tenant's storages. What it then writes names the row's tenant (a row is a `TenantScope`).
   */
  everyTenant(): StorageRow[] {
    return [...this.current().byId.values()];
  }

  /** System work only: every tenant that has a storage (from the copy: no query). */
  tenants(): TenantScope[] {
    return [...new Set(this.everyTenant().map((s) => s.tenant_id))].map((tenant_id) => ({ tenant_id }));
  }

  /**
   * The storage whatever its tenant, for an id taken from a row: system work (a sync, a probe) and the row
   * of a table that references it (a share, an upload, a trash item, a lock: a child carries its storage's
   * tenant, docs/tenants.md principle 2, and is itself found in its tenant once its cluster is scoped).
   */
  ofAnyTenant(id: number): StorageRow | undefined {
    return this.current().byId.get(id);
  }

  /** System work only: the storage of a driver, which knows its uid alone (unique across the installation). */
  ofAnyTenantByUid(uid: string): StorageRow | undefined {
    return this.current().byUid.get(uid);
  }

  /**
   * Adds a storage to the tenant unless its name is taken there, in one unit: the check, whether it is the
   * tenant's first, and the insert (the unique index settles two at once; serializable, so two first
   * storages are not both first). Undefined when the name is taken.
   */
  async insert(s: TenantScope, r: NewStorage): Promise<{ id: number; first: boolean } | undefined> {
    const now = new Date().toISOString();
    const made = await this.db.async.unit(
      function* (t) {
        if ((yield* t.sql(TAKEN, [s.tenant_id, r.name, r.name, -1])).length) return undefined;
        const [{ n }] = yield* t.sql<{ n: number | string }>('SELECT count(*) AS n FROM storages WHERE tenant_id = ?', [s.tenant_id]);
        const ids = yield* t.sql<{ id: number | string }>(
          `INSERT INTO storages (tenant_id, uid, name, driver, config, mount_path, sync_mode, sync_interval_s, enabled, read_only, rbac_enabled, ocr, replica_target_id, created_at, updated_at)
           VALUES (@tenant_id, @uid, @name, @driver, @config, @mount_path, @sync_mode, @sync_interval_s, @enabled, @read_only, @rbac_enabled, @ocr, @replica_target_id, @now, @now)
           ON CONFLICT DO NOTHING RETURNING id`,
          { ...r, ocr: r.ocr ?? 0, now, tenant_id: s.tenant_id },
        );
        return ids.length ? { id: Number(ids[0].id), first: Number(n) === 0 } : undefined;
      },
      { isolation: 'serializable' },
    );
    if (made) await this.changed();
    return made;
  }

  /**
   * Changes the given columns of the tenant's storage `id`; a new name is checked in the same unit
   * (serializable: two storages renamed to one name at once cannot both pass). False when the name is
   * taken, or the storage is missing or another tenant's (nothing changes then).
   */
  async update(s: TenantScope, id: number, patch: Partial<StorageRow>): Promise<boolean> {
    const keys = Object.keys(patch).filter((k) => k !== 'id' && k !== 'uid' && k !== 'tenant_id');
    if (!keys.length) return true;
    const name = patch.name;
    const text = `UPDATE storages SET ${keys.map((k) => `${k} = @${k}`).join(', ')}, updated_at = @updated_at WHERE tenant_id = @tenant_id AND id = @id RETURNING id`;
    const values = {
      ...Object.fromEntries(keys.map((k) => [k, patch[k as keyof StorageRow]])),
      id,
      tenant_id: s.tenant_id,
      updated_at: new Date().toISOString(),
    };
    const done = await this.db.async.unit(
      function* (t) {
        if (name !== undefined && (yield* t.sql(TAKEN, [s.tenant_id, name, name, id])).length) return false;
        return (yield* t.sql(text, values)).length > 0;
      },
      { isolation: name === undefined ? 'read committed' : 'serializable' },
    );
    if (done) await this.changed();
    return done;
  }

  /** Unlinks the tenant's storages from replication target `targetId` (the target was deleted). Returns how many. */
  async unlinkReplicaTarget(s: TenantScope, targetId: number): Promise<number> {
    const n = await this.db.async.run(
      this.db.k
        .updateTable('storages')
        .set({ replica_target_id: null, updated_at: new Date().toISOString() })
        .where('tenant_id', '=', s.tenant_id)
        .where('replica_target_id', '=', targetId),
    );
    if (n) await this.changed();
    return n;
  }

  /** A full sync of the storage finished: its catalogue is whole from now on (catalogue/syncer.ts `listed`). */
  async markSynced(s: TenantScope, id: number): Promise<void> {
    await this.db.async.run(
      this.db.k.updateTable('storages').set({ last_sync_at: new Date().toISOString() }).where('tenant_id', '=', s.tenant_id).where('id', '=', id),
    );
    await this.changed();
  }

  /** Sets the status; a conditional statement, so nothing is written (nor re-read) when it is already so. */
  setStatus(s: TenantScope, id: number, status: 'online' | 'offline', reason: string | null): Promise<void> {
    // One storage's status changes one after another, in call order: the copy read below is then never
    // older than a change still on its way (PostgreSQL), and the last caller's status is the one stored.
    const done = (this.statusQueue.get(id) ?? Promise.resolve()).then(() => this.writeStatus(s, id, status, reason));
    const tail = done.catch(() => {});
    this.statusQueue.set(id, tail);
    void tail.then(() => this.statusQueue.get(id) === tail && this.statusQueue.delete(id));
    return done;
  }

  private async writeStatus(s: TenantScope, id: number, status: 'online' | 'offline', reason: string | null): Promise<void> {
    // Every folder check reports the status: the usual "as it was" costs no statement.
    const cur = this.byId(s, id);
    if (cur && cur.status === status && (cur.status_reason ?? '') === (reason ?? '')) return;
    // A unit, not `db.async.sql`: on SQLite a write waits for another process's lock only inside one.
    const changed = await this.db.async.unit(function* (t) {
      const rows = yield* t.sql(
        "UPDATE storages SET status = ?, status_reason = ? WHERE tenant_id = ? AND id = ? AND (status != ? OR COALESCE(status_reason, '') != COALESCE(?, '')) RETURNING id",
        [status, reason, s.tenant_id, id, status, reason],
      );
      return rows.length > 0;
    });
    if (changed) await this.changed();
  }

  /**
   * Removes the tenant's storage, its cache rows and their search rows, as one unit; backend files are
   * untouched. Another tenant's storage stays.
   */
  async delete(s: TenantScope, id: number): Promise<void> {
    await this.db.async.unit(function* (t) {
      if (!(yield* t.sql('SELECT 1 FROM storages WHERE tenant_id = ? AND id = ?', [s.tenant_id, id])).length) return;
      yield* t.sql('DELETE FROM search_fts WHERE rowid IN (SELECT id FROM nodes WHERE tenant_id = ? AND storage_id = ?)', [s.tenant_id, id]);
      yield* t.sql('DELETE FROM storages WHERE tenant_id = ? AND id = ?', [s.tenant_id, id]);
    });
    await this.changed();
  }

  /** The grants on the tenant's storage `storageId`; none for another tenant's. */
  grants(s: TenantScope, storageId: number): Grant[] {
    return this.current().grants.get(s.tenant_id)?.get(storageId) ?? [];
  }

  /** The tenant's grants, grouped by storage. */
  allGrants(s: TenantScope): ReadonlyMap<number, Grant[]> {
    return this.current().grants.get(s.tenant_id) ?? NO_GRANTS;
  }

  /**
   * Replaces the storage-wide grants (path '') of the tenant's storage, as one unit; folder grants (home
   * folders) stay. False, and nothing changes, when the storage or a person granted is not the tenant's.
   */
  async replaceGrants(s: TenantScope, storageId: number, grants: Array<Omit<Grant, 'id' | 'path'>>): Promise<boolean> {
    const done = await this.db.async.unit(function* (t) {
      if (
        !(yield* ownTenant(
          t,
          s,
          storageId,
          grants.map((g) => g.user_id),
        ))
      )
        return false;
      yield* t.sql("DELETE FROM storage_grants WHERE tenant_id = ? AND storage_id = ? AND path = ''", [s.tenant_id, storageId]);
      for (const g of grants)
        yield* t.sql("INSERT INTO storage_grants (tenant_id, storage_id, user_id, group_name, level, path) VALUES (?, ?, ?, ?, ?, '')", [
          s.tenant_id,
          storageId,
          g.user_id,
          g.group,
          g.level,
        ]);
      return true;
    });
    if (done) await this.changed();
    return done;
  }

  /**
   * Gives one person `level` on the folder `path` (their home) of the tenant's storage, once: the check and
   * the insert are one serializable unit (no unique index covers it), so two at once leave one grant.
   * Whether it added one (not when the storage or the person is another tenant's).
   */
  async grantFolder(s: TenantScope, storageId: number, userId: number, path: string, level: 'viewer' | 'editor'): Promise<boolean> {
    const added = await this.db.async.unit(
      function* (t) {
        if (!(yield* ownTenant(t, s, storageId, [userId]))) return false;
        const had = yield* t.sql('SELECT 1 FROM storage_grants WHERE tenant_id = ? AND storage_id = ? AND user_id = ? AND path = ?', [
          s.tenant_id,
          storageId,
          userId,
          path,
        ]);
        if (had.length) return false;
        yield* t.sql('INSERT INTO storage_grants (tenant_id, storage_id, user_id, group_name, level, path) VALUES (?, ?, ?, NULL, ?, ?)', [
          s.tenant_id,
          storageId,
          userId,
          level,
          path,
        ]);
        return true;
      },
      { isolation: 'serializable' },
    );
    if (added) await this.changed();
    return added;
  }
}
