/** The storages and storage_grants tables (owner: catalogue). */
import { randomBytes } from 'node:crypto';
import type { ChangeChannel, Db, Statement, Tx, Unit } from '../db';
import { driveSync, tx } from '../db/async';
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

export const newUid = (): string => 'st' + randomBytes(8).toString('hex');

/** SQLite's NOCASE folds ASCII letters only. */
const asciiLower = (s: string): string => s.replace(/[A-Z]+/g, (m) => m.toLowerCase());

interface GrantRow {
  id: number;
  storage_id: number;
  user_id: number | null;
  group_name: string | null;
  level: 'viewer' | 'editor';
  path: string;
}

interface Snapshot {
  byId: Map<number, StorageRow>;
  byName: Map<string, StorageRow>;
  /** By name as written: the usual spelling of a path needs no case folding. */
  byExact: Map<string, StorageRow>;
  byUid: Map<string, StorageRow>;
  grants: Map<number, Grant[]>;
}

/** Every row of both tables: the whole copy is read in one go (a handful of storages, their grants). */
function* readAll(t: Tx): Unit<{ rows: StorageRow[]; grants: GrantRow[] }> {
  const rows = yield* t.sql<StorageRow>('SELECT * FROM storages ORDER BY id');
  const grants = yield* t.sql<GrantRow>('SELECT id, storage_id, user_id, group_name, level, path FROM storage_grants ORDER BY id');
  return { rows, grants };
}

/** Rows are frozen: every caller shares them. */
function build(d: { rows: StorageRow[]; grants: GrantRow[] }): Snapshot {
  const snap: Snapshot = { byId: new Map(), byName: new Map(), byExact: new Map(), byUid: new Map(), grants: new Map() };
  for (const r of d.rows) {
    const row = Object.freeze({ ...r, id: Number(r.id) });
    snap.byId.set(row.id, row);
    snap.byName.set(asciiLower(row.name), row);
    snap.byExact.set(row.name, row);
    snap.byUid.set(row.uid, row);
  }
  for (const g of d.grants) {
    const sid = Number(g.storage_id);
    const list = snap.grants.get(sid) ?? snap.grants.set(sid, []).get(sid)!;
    list.push(Object.freeze({ id: Number(g.id), user_id: g.user_id === null ? null : Number(g.user_id), group: g.group_name, level: g.level, path: g.path }));
  }
  for (const list of snap.grants.values()) Object.freeze(list);
  return snap;
}

/** The change notice between instances (PostgreSQL): "the storages or their grants changed, read them again". */
const NOTICE = 'storages';
/** A name is taken when another storage has it as its name or as its uid (both address a storage). */
const TAKEN = 'SELECT 1 FROM storages WHERE (name = ? OR uid = ?) AND id != ?';

/**
 * The storages and their grants, kept in memory: every file request resolves a storage and its grants, so
 * reads (`all`, `byId`, `byNameOrUid`, `grants`…) answer synchronously from a copy, never a statement.
 * `load()` reads it once at start; every write here is awaited and re-reads it before it resolves (and tells
 * the other instances). What changed elsewhere:
 * - SQLite: `total_changes()` (a write on this connection outside these methods: a person's grants going
 *   with the person by cascade) and `PRAGMA data_version` (another process committed, e.g. a CLI command;
 *   asked at most once a millisecond) move; the copy is re-read there and then, synchronously.
 * - PostgreSQL: a notice from another instance (or `resync` after the channel came back) re-reads it
 *   asynchronously (PostgreSQL has no `db.sqlite`).
 */
export class StoragesRepo {
  private snap = build({ rows: [], grants: [] });
  private channel: ChangeChannel | null = null;
  /** Re-reads are numbered: an older one that answers late never replaces a newer copy. */
  private started = 0;
  private applied = 0;
  /** SQLite only: the statements and the connection's counters at the last re-read. */
  private lite?: { changes: Statement; version: Statement; reads: Map<string, Statement> };
  private seen = { changes: -1, version: -1, at: -Infinity };
  private statusQueue = new Map<number, Promise<void>>();

  constructor(private db: Db) {}

  /** Reads the copy (awaited where the repository is built, before the first request). */
  async load(): Promise<void> {
    await this.reload();
  }

  /** Re-reads the copy (at start, after a write here, on another instance's notice). */
  private async reload(): Promise<void> {
    if (this.db.dialect === 'sqlite') {
      this.seen.changes = -1;
      this.followSqlite();
      return;
    }
    const n = ++this.started;
    this.apply(n, await this.db.async.read(readAll));
  }

  /** Hears the other instances' writes (PostgreSQL) and tells them of this one's. */
  attachChannel(channel: ChangeChannel): void {
    this.channel = channel;
    channel.subscribe((event) => {
      // A failed re-read (database away) keeps the copy; the next notice, write or resync reads again.
      if (event === NOTICE || event === 'resync') this.reload().catch(() => {});
    });
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
    const q = (this.lite ??= { changes: s.prepare('SELECT total_changes()').pluck(), version: s.prepare('PRAGMA data_version').pluck(), reads: new Map() });
    const changes = q.changes.get() as number;
    const now = performance.now();
    // Another process's commit has no ordering with our requests: its counter is asked at most once a millisecond.
    if (changes === this.seen.changes && now - this.seen.at < 1) return;
    const version = q.version.get() as number;
    this.seen.at = now;
    if (changes === this.seen.changes && version === this.seen.version) return;
    this.seen.changes = changes;
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

  all(): StorageRow[] {
    return [...this.current().byId.values()];
  }

  byId(id: number): StorageRow | undefined {
    return this.current().byId.get(id);
  }

  byUid(uid: string): StorageRow | undefined {
    return this.current().byUid.get(uid);
  }

  /** By name (case-insensitive) or by uid: both address a storage everywhere. */
  byNameOrUid(key: string): StorageRow | undefined {
    const snap = this.current();
    return snap.byUid.get(key) ?? snap.byExact.get(key) ?? snap.byName.get(asciiLower(key));
  }

  /** Whether another storage has `name` as its name or uid (a form's early answer; `insert`/`update` decide). */
  nameTaken(name: string, exceptId = -1): boolean {
    const other = this.byNameOrUid(name);
    return !!other && other.id !== exceptId;
  }

  /**
   * Adds a storage unless its name is taken, in one unit: the check, whether it is the first, and the insert
   * (the unique index settles two at once; serializable, so two first storages are not both first).
   * Undefined when the name is taken.
   */
  async insert(r: NewStorage): Promise<{ id: number; first: boolean } | undefined> {
    const now = new Date().toISOString();
    const made = await this.db.async.unit(
      function* (t) {
        if ((yield* t.sql(TAKEN, [r.name, r.name, -1])).length) return undefined;
        const [{ n }] = yield* t.sql<{ n: number | string }>('SELECT count(*) AS n FROM storages');
        const ids = yield* t.sql<{ id: number | string }>(
          `INSERT INTO storages (uid, name, driver, config, mount_path, sync_mode, sync_interval_s, enabled, read_only, rbac_enabled, ocr, replica_target_id, created_at, updated_at)
           VALUES (@uid, @name, @driver, @config, @mount_path, @sync_mode, @sync_interval_s, @enabled, @read_only, @rbac_enabled, @ocr, @replica_target_id, @now, @now)
           ON CONFLICT DO NOTHING RETURNING id`,
          { ...r, ocr: r.ocr ?? 0, now },
        );
        return ids.length ? { id: Number(ids[0].id), first: Number(n) === 0 } : undefined;
      },
      { isolation: 'serializable' },
    );
    if (made) await this.changed();
    return made;
  }

  /**
   * Changes the given columns; a new name is checked in the same unit (serializable: two storages renamed
   * to one name at once cannot both pass). False when the name is taken.
   */
  async update(id: number, patch: Partial<StorageRow>): Promise<boolean> {
    const keys = Object.keys(patch).filter((k) => k !== 'id' && k !== 'uid');
    if (!keys.length) return true;
    const name = patch.name;
    const text = `UPDATE storages SET ${keys.map((k) => `${k} = @${k}`).join(', ')}, updated_at = @updated_at WHERE id = @id`;
    const values = { ...Object.fromEntries(keys.map((k) => [k, patch[k as keyof StorageRow]])), id, updated_at: new Date().toISOString() };
    const done = await this.db.async.unit(
      function* (t) {
        if (name !== undefined && (yield* t.sql(TAKEN, [name, name, id])).length) return false;
        yield* t.sql(text, values);
        return true;
      },
      { isolation: name === undefined ? 'read committed' : 'serializable' },
    );
    if (done) await this.changed();
    return done;
  }

  /** Unlinks every storage from replication target `targetId` (the target was deleted). Returns how many. */
  async unlinkReplicaTarget(targetId: number): Promise<number> {
    const n = await this.db.async.run(
      this.db.k.updateTable('storages').set({ replica_target_id: null, updated_at: new Date().toISOString() }).where('replica_target_id', '=', targetId),
    );
    if (n) await this.changed();
    return n;
  }

  /** A full sync of the storage finished: its catalogue is whole from now on (catalogue/syncer.ts `listed`). */
  async markSynced(id: number): Promise<void> {
    await this.db.async.run(this.db.k.updateTable('storages').set({ last_sync_at: new Date().toISOString() }).where('id', '=', id));
    await this.changed();
  }

  /** Sets the status; a conditional statement, so nothing is written (nor re-read) when it is already so. */
  setStatus(id: number, status: 'online' | 'offline', reason: string | null): Promise<void> {
    // One storage's status changes one after another, in call order: the copy read below is then never
    // older than a change still on its way (PostgreSQL), and the last caller's status is the one stored.
    const done = (this.statusQueue.get(id) ?? Promise.resolve()).then(() => this.writeStatus(id, status, reason));
    const tail = done.catch(() => {});
    this.statusQueue.set(id, tail);
    void tail.then(() => this.statusQueue.get(id) === tail && this.statusQueue.delete(id));
    return done;
  }

  private async writeStatus(id: number, status: 'online' | 'offline', reason: string | null): Promise<void> {
    // Every folder check reports the status: the usual "as it was" costs no statement.
    const cur = this.byId(id);
    if (cur && cur.status === status && (cur.status_reason ?? '') === (reason ?? '')) return;
    // A unit, not `db.async.sql`: on SQLite a write waits for another process's lock only inside one.
    const changed = await this.db.async.unit(function* (t) {
      const rows = yield* t.sql(
        "UPDATE storages SET status = ?, status_reason = ? WHERE id = ? AND (status != ? OR COALESCE(status_reason, '') != COALESCE(?, '')) RETURNING id",
        [status, reason, id, status, reason],
      );
      return rows.length > 0;
    });
    if (changed) await this.changed();
  }

  /** Removes the storage, its cache rows and their search rows, as one unit; backend files are untouched. */
  async delete(id: number): Promise<void> {
    await this.db.async.unit(function* (t) {
      yield* t.sql('DELETE FROM search_fts WHERE rowid IN (SELECT id FROM nodes WHERE storage_id = ?)', [id]);
      yield* t.sql('DELETE FROM storages WHERE id = ?', [id]);
    });
    await this.changed();
  }

  grants(storageId: number): Grant[] {
    return this.current().grants.get(storageId) ?? [];
  }

  /** All grants, grouped by storage. */
  allGrants(): Map<number, Grant[]> {
    return this.current().grants;
  }

  /** Replaces the storage-wide grants (path ''), as one unit; folder grants (home folders) stay. */
  async replaceGrants(storageId: number, grants: Array<Omit<Grant, 'id' | 'path'>>): Promise<void> {
    await this.db.async.unit(function* (t) {
      yield* t.sql("DELETE FROM storage_grants WHERE storage_id = ? AND path = ''", [storageId]);
      for (const g of grants)
        yield* t.sql("INSERT INTO storage_grants (storage_id, user_id, group_name, level, path) VALUES (?, ?, ?, ?, '')", [
          storageId,
          g.user_id,
          g.group,
          g.level,
        ]);
    });
    await this.changed();
  }

  /**
   * Gives one person `level` on the folder `path` (their home), once: the check and the insert are one
   * serializable unit (no unique index covers it), so two at once leave one grant. Whether it added one.
   */
  async grantFolder(storageId: number, userId: number, path: string, level: 'viewer' | 'editor'): Promise<boolean> {
    const added = await this.db.async.unit(
      function* (t) {
        if ((yield* t.sql('SELECT 1 FROM storage_grants WHERE storage_id = ? AND user_id = ? AND path = ?', [storageId, userId, path])).length) return false;
        yield* t.sql('INSERT INTO storage_grants (storage_id, user_id, group_name, level, path) VALUES (?, ?, NULL, ?, ?)', [storageId, userId, level, path]);
        return true;
      },
      { isolation: 'serializable' },
    );
    if (added) await this.changed();
    return added;
  }
}
