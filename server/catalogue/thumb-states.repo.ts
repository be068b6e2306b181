/**
 * The thumbnail columns of `nodes` (thumb_state, thumb_error): the catalogue
 * owns the table, the thumbnails module drives the state machine through
 * this repository and touches nothing else of a node. Thumbnails are the installation's work over every
 * tenant's files (one drain, one cache folder keyed by node id): a method names the tenants it covers
 * (`tenant_id IN …`, usually every tenant that has a storage), and a node's own statements its tenant.
 */
import { sql } from 'kysely';
import type { Db, TenantScope } from '../db';

export type ThumbState = 'pending' | 'ready' | 'skipped' | 'failed';

export interface ThumbNode {
  id: number;
  tenant_id: number;
  storage_id: number;
  path: string;
  name: string;
  type: 'file' | 'dir';
  size: number;
  mtime: number;
  mime: string | null;
  thumb_state: ThumbState | null;
  thumb_error: string | null;
  deleted_at: string | null;
}

export interface CandidateQuery {
  tenants: readonly TenantScope[];
  storageId?: number;
  retryFailed: boolean;
  retrySkipped: boolean;
  afterId: number;
  limit: number;
}

const COLS = ['id', 'tenant_id', 'storage_id', 'path', 'name', 'type', 'size', 'mtime', 'mime', 'thumb_state', 'thumb_error', 'deleted_at'] as const;

/**
 * Constants go into the SQL text as literals, as they did in the raw SQL: SQLite plans the partial
 * index `nodes_thumb_pending` (and LIKE) from the statement itself, without re-preparing on every bind.
 */
const lit = <T extends string>(v: T) => sql.lit(v);
/** Ids per statement: far below either database's bound on parameters. */
const CHUNK = 500;
const ids = (tenants: readonly TenantScope[]) => tenants.map((t) => t.tenant_id);
/** A node as its own statements name it: its id and its tenant. */
type NodeKey = { id: number; tenant_id: number };

export class ThumbStates {
  constructor(private db: Db) {}

  /** The node's thumbnail facts, or undefined when there is no row among the tenants'. */
  async byId(tenants: readonly TenantScope[], id: number): Promise<ThumbNode | undefined> {
    if (!tenants.length) return undefined;
    return this.db.async.first(this.db.k.selectFrom('nodes').select(COLS).where('tenant_id', 'in', ids(tenants)).where('id', '=', id)) as Promise<
      ThumbNode | undefined
    >;
  }

  /** Moves a file's state to `pending` unless it is `ready` (ready is never re-run). Resolves whether it moved. */
  async markPending(node: NodeKey): Promise<boolean> {
    return (await this.db.async.run(this.toPending([node], [node.id]))) === 1;
  }

  /**
   * Records a run's outcome, only if the file still has the size and mtime the
   * run read: a write during the run already reset the state for a new run.
   */
  async finish(node: NodeKey, state: Exclude<ThumbState, 'pending'>, error: string | null, seen: { size: number; mtime: number }): Promise<boolean> {
    const changed = await this.db.async.run(
      this.db.k
        .updateTable('nodes')
        .set({ thumb_state: state, thumb_error: error === null ? null : error.slice(0, 1000) })
        .where('tenant_id', '=', node.tenant_id)
        .where('id', '=', node.id)
        .where('size', '=', seen.size)
        .where('mtime', '=', seen.mtime),
    );
    return changed === 1;
  }

  /** The next batch of files the backfill should dispatch, in id order after `afterId`. Trashed and soft-deleted nodes are excluded. */
  candidates(q: CandidateQuery): Promise<ThumbNode[]> {
    if (!q.tenants.length) return Promise.resolve([]);
    let query = this.db.k
      .selectFrom('nodes')
      .select(COLS)
      .where('tenant_id', 'in', ids(q.tenants))
      .where('id', '>', q.afterId)
      .where('type', '=', lit('file'))
      .where('deleted_at', 'is', null);
    if (q.storageId !== undefined) query = query.where('storage_id', '=', q.storageId);
    query = query
      .where('path', 'not like', lit('.service-trash/%'))
      .where('path', 'not like', lit('.versions/%'))
      .where('path', 'not like', lit('%/.versions/%'))
      .where('path', 'not like', lit('%/.service-trash/%'))
      .where((eb) => {
        const states = [eb('thumb_state', 'is', null), eb('thumb_state', '=', lit('pending'))];
        if (q.retryFailed) states.push(eb('thumb_state', '=', lit('failed')));
        if (q.retrySkipped) states.push(eb('thumb_state', '=', lit('skipped')));
        return eb.or(states);
      });
    return this.db.async.all(query.orderBy('id').limit(q.limit)) as Promise<ThumbNode[]>;
  }

  /**
   * Moves each of `files` (of the tenants) to `pending` (`ready` ones stay): one unit of conditional updates,
   * 500 ids a statement, so a sync batch of thousands of files costs a few statements. Resolves with the ids that moved.
   */
  markPendingMany(tenants: readonly TenantScope[], files: number[]): Promise<number[]> {
    if (!tenants.length) return Promise.resolve([]);
    const parts: number[][] = [];
    for (let i = 0; i < files.length; i += CHUNK) parts.push(files.slice(i, i + CHUNK));
    const toPending = (part: number[]) => this.toPending(tenants, part).returning('id');
    return this.db.async.unit(function* (t) {
      const moved: number[] = [];
      for (const part of parts) for (const r of yield* t.all(toPending(part))) moved.push(r.id);
      return moved;
    });
  }

  /**
   * Up to `limit` live files waiting in `pending` with an id above `afterId`,
   * in id order: the durable backlog (files found by sync, and what a restart
   * interrupted) is paged from here instead of being held in memory. Only the tenants' files.
   */
  async pendingAfter(tenants: readonly TenantScope[], afterId: number, limit: number): Promise<number[]> {
    if (!tenants.length) return [];
    const rows = await this.db.async.all(
      this.db.k
        .selectFrom('nodes')
        .select('id')
        .where('tenant_id', 'in', ids(tenants))
        .where('thumb_state', '=', lit('pending'))
        .where('type', '=', lit('file'))
        .where('deleted_at', 'is', null)
        .where('id', '>', afterId)
        .orderBy('id')
        .limit(limit),
    );
    return rows.map((r) => r.id);
  }

  /**
   * Which of `nodes` have a node row among the tenants'. Rejects when the database cannot answer (the sweeper
   * then deletes nothing).
   */
  existing(tenants: readonly TenantScope[], nodes: number[]): Promise<Set<number>> {
    const k = this.db.k;
    const among = ids(tenants);
    return this.db.async.read(function* (t) {
      const found = new Set<number>();
      if (!among.length) return found;
      for (let i = 0; i < nodes.length; i += CHUNK) {
        for (const r of yield* t.all(
          k
            .selectFrom('nodes')
            .select('id')
            .where('tenant_id', 'in', among)
            .where('id', 'in', nodes.slice(i, i + CHUNK)),
        ))
          found.add(r.id);
      }
      return found;
    });
  }

  /** The conditional move to `pending` of the tenants' files among `files` that are not `ready`. */
  private toPending(tenants: readonly TenantScope[], files: number[]) {
    return this.db.k
      .updateTable('nodes')
      .set({ thumb_state: lit('pending'), thumb_error: null })
      .where('tenant_id', 'in', ids(tenants))
      .where('id', 'in', files)
      .where('type', '=', lit('file'))
      .where((eb) => eb(eb.fn.coalesce('thumb_state', lit('')), '!=', lit('ready')));
  }
}
