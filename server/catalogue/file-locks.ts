/**
 * App locks on files (SPEC: File entry `locked`/`lock`, Errors `locked`). An
 * app holds a file while it works on it (out for signature, a conversion
 * running); a locked file is read-only for everyone on every door. The file
 * service's access check calls `check` on every write target and `checkTree`
 * before a folder is moved or deleted; the holder writes with the token `set`
 * returned (only its sha256 is stored). Locks are keyed by node id: they
 * follow a rename or move within the storage and go with a deleted file.
 *
 * Live locks are few, so every lock is kept in memory with its node's path and
 * the checks never read the database (they are synchronous, on every write):
 * `start()` reads them all before the first request; this instance's own
 * writes (set, clear, the expiry sweep) change the copy once committed; a move
 * or removal in a storage holding a lock (the write gate, a sync) re-reads it
 * before the write answers, since the path of a locked node may have changed;
 * and other instances on the database (PostgreSQL) are told through the
 * change channel and re-read. An expired lock stops counting at its expiry
 * (compared in memory) and a timer set to the next expiry removes it (listings
 * drop it then). Which storages hold any lock follows from the copy, so the
 * listing of a storage without locks costs nothing more.
 */
import type { ChangeChannel, Db, TenantScope } from '../db';
import type { ActorRef, EventBus } from '../events';
import type { FileLock } from '../contract';
import { AppError } from '../errors';
import { randomToken, sha256Hex } from '../lib/crypto';
import { baseName, parentRel, uiPath } from '../lib/paths';
import { FileLocksRepo, type LockRow, type PlacedLock } from './file-locks.repo';
import type { GateEvent } from './gate.repo';
import type { StorageRef } from './storage-ref';

export type { FileLock };

/** What an app asks for; `until` is ISO 8601 in the future, or null (until cleared). */
export interface LockInput {
  plugin: string;
  label: string;
  reason?: string | null;
  reason_text?: string | null;
  until?: string | null;
}

/** A lock as the app and the host API see it. */
export interface LockView extends FileLock {
  locked_by: number | null;
  locked_at: string;
}

/** App ids (the manifest's id rule) and short machine words (`reason`, app-state keys). */
export const APP_ID = /^[a-z0-9][a-z0-9._-]{0,62}$/;
export const WORD = /^[a-z0-9][a-z0-9._-]{0,63}$/;
const CONTROL = /[\u0000-\u001f\u007f]/;
/** The longest a timer waits before it looks again (setTimeout's range, and clock changes). */
const MAX_TIMER_MS = 3_600_000;
/** The change notice between instances: "the locks changed, read them again". */
const NOTICE = 'file-locks';

/** The hash a holder's token is known by (ActorFiles.holding keeps it, `check` compares it). */
export const lockTokenHash = (token: string): string => sha256Hex(`file-lock\n${token}`);

/** The event of a change of a file's marks (lock, app state): page caches drop the folder, browsers with it open hear of it. */
export function markChange(storageId: number, rel: string): GateEvent {
  return ['folder.changed', { storage_id: storageId, folder: parentRel(rel), kind: 'updated', path: rel, name: baseName(rel) }];
}

/**
 * The storages locks are on, whatever their tenant (`StoragesRepo` is one): a lock carries its storage's
 * tenant, found by a map lookup, and the copy and the expiry sweep cover every tenant that has a storage.
 */
export interface LockStorages {
  ofAnyTenant(id: number): (StorageRef & { name: string }) | undefined;
  everyTenant(): ReadonlyArray<TenantScope>;
}

export class FileLocks {
  private repo: FileLocksRepo;
  /** Every lock, by storage then path (a storage's map exists only while it holds one); null until `start`. */
  private copy: Map<number, Map<string, PlacedLock>> | null = null;
  private channel: ChangeChannel | null = null;
  /** Changes of the copy are numbered: a re-read that answers after a newer change never replaces it. */
  private started = 0;
  private applied = 0;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    db: Db,
    private bus: EventBus,
    private storages: LockStorages,
    private log: (msg: string, err?: unknown) => void,
  ) {
    this.repo = new FileLocksRepo(db, bus);
  }

  /**
   * Reads every lock and arms the expiry timer; awaited before the first request. Rejects when the locks
   * cannot be read: serving without them would let anyone write a locked file.
   */
  async start(): Promise<void> {
    await this.reload();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  /** Hears the other instances' lock changes (PostgreSQL) and tells them of this one's. */
  attachChannel(channel: ChangeChannel): void {
    this.channel = channel;
    channel.subscribe((event, data) => {
      if (event !== NOTICE && event !== 'resync') return;
      // A move or removal elsewhere names its storage: only a copy holding a lock there may have a stale path.
      const storageId = (data as { storage_id?: number } | null)?.storage_id;
      if (event === NOTICE && storageId !== undefined && this.copy?.has(storageId) === false) return;
      this.reload().catch((e) => this.log('file locks could not be read again now; the next change reads them', e));
    });
  }

  /**
   * Nodes of the storage moved or left the catalogue (write gate, sync): when it holds a lock, the copy is
   * read again (a locked node's path may have changed). The other instances are told either way: one of them
   * may hold a lock there this copy has not heard of yet (set while the move ran). Never rejects.
   */
  async treeChanged(storageId: number): Promise<void> {
    this.channel?.publish(NOTICE, { storage_id: storageId });
    if (!this.copy?.has(storageId)) return;
    try {
      await this.reload();
    } catch (e) {
      this.log('file locks could not be read again after a move or removal; the next change reads them', e);
    }
  }

  /** Whether any file of the storage may be locked (false: no lock for sure; listings skip the join). */
  any(storageId: number): boolean {
    return this.copy?.has(storageId) ?? true;
  }

  /** Whether any storage may hold a lock (search spans storages). */
  anyAtAll(): boolean {
    return this.copy === null || this.copy.size > 0;
  }

  /**
   * Locks the file at `rel` for `input.plugin` and returns the holder's token
   * (shown once). The same app locking again replaces its lock and token;
   * another app's live lock → `locked`. Only a catalogued file can be locked
   * (`not_found` otherwise; every file the file service wrote or listed is).
   */
  async set(storageId: number, rel: string, input: LockInput, by: ActorRef | null): Promise<{ token: string; lock: LockView }> {
    const row = checkInput(input);
    const token = randomToken(24);
    const lock: LockRow = { ...row, token_hash: lockTokenHash(token), locked_by: by?.id ?? null, locked_at: new Date().toISOString() };
    let nodeId = 0;
    await this.repo.set(
      this.storage(storageId, rel),
      rel,
      lock,
      (node, current) => {
        if (!node || node.deleted_at) throw new AppError('not_found', { path: uiPath(this.storageName(storageId), rel) });
        if (node.type !== 'file') throw new AppError('validation_failed', { field: 'path', reason: 'only files can be locked' }, { field: 'path' });
        const held = this.live(current);
        if (held && held.plugin !== input.plugin) throw this.refusal(storageId, rel, held);
        return (nodeId = node.id);
      },
      [markChange(storageId, rel)],
    );
    // Into the copy as soon as it committed: the next check here refuses.
    this.change((c) => {
      const inStorage = c.get(storageId) ?? c.set(storageId, new Map()).get(storageId)!;
      for (const [p, l] of inStorage) if (l.node_id === nodeId) inStorage.delete(p);
      inStorage.set(rel, { ...lock, node_id: nodeId, storage_id: storageId, path: rel });
    });
    await this.bus.flush();
    return { token, lock: view(lock) };
  }

  /**
   * Removes `plugin`'s lock on the file at `rel`; false when there was none
   * (or it had expired). Another app's live lock → `locked`.
   */
  async clear(storageId: number, rel: string, plugin: string): Promise<boolean> {
    const cleared = await this.repo.clear(
      this.storage(storageId, rel),
      rel,
      (current) => {
        const held = this.live(current);
        if (held && held.plugin !== plugin) throw this.refusal(storageId, rel, held);
        return !!held;
      },
      [markChange(storageId, rel)],
    );
    if (cleared)
      this.change((c) => {
        c.get(storageId)?.delete(rel);
        if (c.get(storageId)?.size === 0) c.delete(storageId);
      });
    await this.bus.flush();
    return cleared;
  }

  /** The live lock on the file at `rel`, or null. */
  of(storageId: number, rel: string): LockView | null {
    const row = this.live(this.copy?.get(storageId)?.get(rel));
    return row ? view(row) : null;
  }

  /** The live locks at `rel` and below it, by path ('' is the whole storage): an app's batch, a folder. */
  within(storageId: number, rel: string): Map<string, LockView> {
    const out = new Map<string, LockView>();
    for (const r of this.below(storageId, rel)) out.set(r.path, view(r));
    return out;
  }

  /**
   * Refuses (`locked`, with the lock's details) a change of the file at
   * `rel` while an app holds it, unless `held` has the lock's token hash.
   */
  check(storageId: number, rel: string, held: readonly string[] = []): void {
    const row = this.live(this.copy?.get(storageId)?.get(rel));
    if (row && !held.includes(row.token_hash)) throw this.refusal(storageId, rel, row);
  }

  /** As `check`, for `rel` and everything below it: a folder holding a locked file is not moved or deleted. */
  checkTree(storageId: number, rel: string, held: readonly string[] = []): void {
    const row = this.below(storageId, rel).find((r) => !held.includes(r.token_hash));
    if (row) throw this.refusal(storageId, row.path, row);
  }

  /** The live locks at `rel` and below it. */
  private below(storageId: number, rel: string): PlacedLock[] {
    const out: PlacedLock[] = [];
    for (const [path, l] of this.copy?.get(storageId) ?? []) {
      if ((rel === '' || path === rel || path.startsWith(`${rel}/`)) && this.live(l)) out.push(l);
    }
    return out;
  }

  private live<T extends LockRow>(row: T | undefined): T | undefined {
    return row && (row.until === null || row.until > new Date().toISOString()) ? row : undefined;
  }

  /** The spec's 423: plugin, plugin_label, path, reason, until (and reason_text). */
  private refusal(storageId: number, rel: string, row: FileLock): AppError {
    const info = {
      plugin: row.plugin,
      plugin_label: row.plugin_label,
      path: uiPath(this.storageName(storageId), rel),
      reason: row.reason,
      reason_text: row.reason_text,
      until: row.until,
    };
    return new AppError('locked', info, info, `locked by ${row.plugin}`);
  }

  /** The storage a lock is on (a storage that is gone: `not_found`, as a file that is not there). */
  private storage(storageId: number, rel: string): StorageRef {
    const s = this.storages.ofAnyTenant(storageId);
    if (!s) throw new AppError('not_found', { path: uiPath(String(storageId), rel) });
    return s;
  }

  private storageName(id: number): string {
    return this.storages.ofAnyTenant(id)?.name ?? String(id);
  }

  /** Every tenant that has a storage (from the storages' copy: no query). */
  private tenants(): TenantScope[] {
    return [...new Set(this.storages.everyTenant().map((s) => s.tenant_id))].map((tenant_id) => ({ tenant_id }));
  }

  /** Reads every lock into the copy and re-arms the timer. A read overtaken by a change here may have missed it: it reads again. */
  private async reload(): Promise<void> {
    let n: number;
    let rows: PlacedLock[];
    do {
      n = ++this.started;
      rows = await this.repo.all(this.tenants());
    } while (n < this.applied);
    this.applied = n;
    const c = new Map<number, Map<string, PlacedLock>>();
    for (const r of rows) (c.get(r.storage_id) ?? c.set(r.storage_id, new Map()).get(r.storage_id)!).set(r.path, r);
    this.copy = c;
    this.arm();
  }

  /** Applies this instance's committed write to the copy (newer than any re-read under way), re-arms, tells the others. */
  private change(edit: (c: Map<number, Map<string, PlacedLock>>) => void): void {
    this.applied = ++this.started;
    edit((this.copy ??= new Map()));
    this.arm();
    this.channel?.publish(NOTICE, null);
  }

  /** Sets the timer to the copy's next expiry (or clears it when no lock expires). */
  private arm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    let next: string | null = null;
    for (const inStorage of this.copy?.values() ?? [])
      for (const l of inStorage.values()) if (l.until !== null && (next === null || l.until < next)) next = l.until;
    if (next === null || this.stopped) return;
    const wait = Math.min(MAX_TIMER_MS, Math.max(0, Date.parse(next) - Date.now()));
    this.timer = setTimeout(() => void this.sweep(), wait).unref();
  }

  /** Removes expired locks and tells their folders (and the other instances); a database held elsewhere is waited out. */
  private async sweep(): Promise<void> {
    this.timer = null;
    try {
      const gone = await this.repo.sweep(this.tenants(), new Date().toISOString(), (r) => [markChange(r.storage_id, r.path)]);
      await this.bus.flush();
      await this.reload();
      if (gone > 0) this.channel?.publish(NOTICE, null);
    } catch (e) {
      this.log('expired file locks could not be removed now; trying again', e);
      if (!this.stopped) this.timer = setTimeout(() => void this.sweep(), 1000).unref();
    }
  }
}

function view(r: LockRow): LockView {
  return {
    plugin: r.plugin,
    plugin_label: r.plugin_label,
    reason: r.reason,
    reason_text: r.reason_text,
    until: r.until,
    locked_by: r.locked_by,
    locked_at: r.locked_at,
  };
}

/** The stored fields of a valid request; `validation_failed` naming the first bad field otherwise. */
function checkInput(i: LockInput): FileLock {
  const bad = (field: string, reason: string) => new AppError('validation_failed', { field, reason }, { field, reason });
  if (typeof i.plugin !== 'string' || !APP_ID.test(i.plugin)) throw bad('plugin', 'an app id');
  if (typeof i.label !== 'string' || i.label.trim() === '' || i.label.length > 128 || CONTROL.test(i.label))
    throw bad('label', '1 to 128 characters, no control characters');
  const reason = i.reason ?? null;
  if (reason !== null && (typeof reason !== 'string' || !WORD.test(reason))) throw bad('reason', 'a short word: a-z, 0-9, . _ -');
  const text = i.reason_text ?? null;
  if (text !== null && (typeof text !== 'string' || text.length > 500 || CONTROL.test(text)))
    throw bad('reason_text', 'at most 500 characters, no control characters');
  let until: string | null = null;
  if (i.until !== undefined && i.until !== null) {
    const at = typeof i.until === 'string' ? Date.parse(i.until) : NaN;
    if (!Number.isFinite(at) || at <= Date.now()) throw bad('until', 'an ISO 8601 time in the future');
    until = new Date(at).toISOString();
  }
  return { plugin: i.plugin, plugin_label: i.label.trim(), reason, reason_text: text, until };
}
