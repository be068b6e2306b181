/**
 * The write gate's units of work (write-gate.ts holds the rules): the node rows of a write, a removal or a
 * move, and the outbox rows that announce it, committed together. The gate says which events to record;
 * a unit decides nothing else.
 */
import type { Db, TenantScope } from '../db';
import type { Tx } from '../db/async';
import type { EventBus, EventMap, EventName } from '../events';
import type { Entry } from '../storage';
import { baseName } from '../lib/paths';
import { mimeOf } from './mime';
import { NodesRepo, type NodeRow } from './nodes.repo';
import type { StorageRef } from './storage-ref';
import type { StorageUse } from './tenant-usage';

/** An outbox row to record: an event and its payload. */
export type GateEvent = { [E in EventName]: [E, EventMap[E]] }[EventName];

export interface WrittenInput {
  ownerId: number | null;
  /** Extracted text of a small text file, for full-text search. */
  body?: string;
  /** The writer's word on whether the item is new; absent: decided from the row before. */
  created?: boolean;
  /** The events to record, once the node's id and newness are known (no I/O). */
  events: (id: number, created: boolean) => GateEvent[];
}

export class GateRepo {
  constructor(
    private db: Db,
    private nodes: NodesRepo,
    private bus: EventBus,
  ) {}

  /** A storage's changes are announced in its tenant (the row's). */
  private *recordIn(t: Tx, s: TenantScope, events: GateEvent[]) {
    for (const [event, payload] of events) yield* this.bus.recordIn(t, s, event, payload as never);
  }

  /**
   * Refreshes the row of a written item (and makes its missing parents) with its events, in one unit;
   * `created`: whether it was new (a row deleted before counts as new). Serializable on PostgreSQL: it
   * reads (is the path new? are its parents there?) and decides, and two writes of one new path, or of
   * two new files in one new folder, must not both decide "new" (the second one is run again and sees
   * the first); a unique violation (the sync made the row meanwhile, which serializable does not always
   * report as 40001: CI saw it on a rename) runs it again too. The row is read inside the unit: once it
   * commits the write is done, and a read after it that met a database going away would answer an error
   * for a write that happened.
   */
  written(s: StorageRef, path: string, entry: Entry, o: WrittenInput): Promise<{ row: NodeRow; created: boolean; delta: StorageUse }> {
    const { nodes } = this;
    const self = this;
    return this.db.async.unit(
      function* (t) {
        const before = yield* nodes.getIn(t, s, path);
        const created = o.created ?? (!before || !!before.deleted_at);
        yield* nodes.ensureParentsIn(t, s, path);
        const id = yield* nodes.upsertIn(t, s, path, { ...entry, name: baseName(path) }, o.ownerId);
        if (o.body !== undefined && entry.type === 'file' && NodesRepo.textual(entry.mime ?? mimeOf(path), entry.size)) yield* nodes.setBodyIn(t, id, o.body);
        yield* self.recordIn(t, s, o.events(id, created));
        // What the write changed in the tenant's live files (its quotas: tenant-usage.ts).
        const was = before && !before.deleted_at && before.type === 'file' ? { bytes: before.size, files: 1 } : { bytes: 0, files: 0 };
        const now = entry.type === 'file' ? { bytes: entry.size, files: 1 } : { bytes: 0, files: 0 };
        return { row: (yield* nodes.getIn(t, s, path))!, created, delta: { bytes: now.bytes - was.bytes, files: now.files - was.files } };
      },
      { isolation: 'serializable', retryUnique: true },
    );
  }

  /** Removes the rows at and below `path` with their events, in one unit; the removed ids and the live files' bytes and count. */
  removed(s: StorageRef, path: string, events: GateEvent[]): Promise<{ ids: number[]; freed: StorageUse }> {
    const { nodes } = this;
    const self = this;
    // Read committed is enough: the delete decides nothing from a read, and a second removal finds no rows.
    return this.db.async.unit(function* (t) {
      const out = yield* nodes.removeTreeCountedIn(t, s, path);
      yield* self.recordIn(t, s, events);
      return out;
    });
  }

  /**
   * Removes the row a taken-back write may have left (its COMMIT was in doubt, and the bytes are gone):
   * only a row with that write's size and mtime, so a later write of the path keeps its own. Whether one went.
   */
  takenBack(s: StorageRef, path: string, entry: Entry, events: GateEvent[]): Promise<boolean> {
    const { nodes } = this;
    const self = this;
    return this.db.async.unit(function* (t) {
      const row = yield* nodes.getIn(t, s, path);
      if (!row || row.deleted_at || row.size !== entry.size || row.mtime !== Math.round(entry.mtime)) return false;
      yield* nodes.removeTreeIn(t, s, path);
      yield* self.recordIn(t, s, events);
      return true;
    });
  }

  /**
   * Re-keys the rows of a move within one storage (ids follow), makes the target's missing parents and a
   * row for an item never catalogued, with the events, in one unit; the target's row. Serializable, as `written`.
   */
  moved(s: StorageRef, from: string, to: string, entry: Entry, ownerId: number | null, events: GateEvent[]): Promise<NodeRow | undefined> {
    const { nodes } = this;
    const self = this;
    return this.db.async.unit(
      function* (t) {
        yield* nodes.ensureParentsIn(t, s, to);
        yield* nodes.moveTreeIn(t, s, from, to);
        if (!(yield* nodes.getIn(t, s, to))) yield* nodes.upsertIn(t, s, to, { ...entry, name: baseName(to) }, ownerId);
        yield* self.recordIn(t, s, events);
        return yield* nodes.getIn(t, s, to);
      },
      { isolation: 'serializable', retryUnique: true },
    );
  }
}
