/**
 * The notifications table (owned by events): the bell's rows, one per recipient. Every statement names its
 * tenant (docs/tenants.md): a row is written in the tenant its event rang in, and read, counted, marked and
 * pruned only there, so another tenant's rows are never listed nor changed, whatever the user id.
 */
import type { Db } from '../db';
import type { TenantScope } from '../db/tenant-tables';
import type { NotificationsTable } from '../db/tables';

export type NotificationRow = Omit<NotificationsTable, 'id'> & { id: number };

export interface NotificationInput {
  event: string;
  severity: NotificationsTable['severity'];
  title: string;
  body: string;
  /** JSON text. */
  data: string;
  created_at: string;
}

export class NotificationsRepo {
  constructor(private db: Db) {}

  /** One row per user id of the tenant in one unit of work, each user's oldest rows past `keep` pruned; the rows written. */
  insertFor(s: TenantScope, userIds: number[], n: NotificationInput, keep: number): Promise<Array<[number, NotificationRow]>> {
    const { k } = this.db;
    return this.db.async.unit(function* (t) {
      const out: Array<[number, NotificationRow]> = [];
      for (const uid of userIds) {
        const row = (yield* t.first(
          k
            .insertInto('notifications')
            .values({ ...n, tenant_id: s.tenant_id, user_id: uid })
            .returningAll(),
        )) as NotificationRow;
        const oldestKept = k
          .selectFrom('notifications')
          .select('id')
          .where('tenant_id', '=', s.tenant_id)
          .where('user_id', '=', uid)
          .orderBy('id', 'desc')
          .limit(1)
          .offset(keep);
        yield* t.run(k.deleteFrom('notifications').where('tenant_id', '=', s.tenant_id).where('user_id', '=', uid).where('id', '<=', oldestKept));
        out.push([uid, row]);
      }
      return out;
    });
  }

  /** The user's rows in the tenant, newest first; `before` pages by id; `unreadOnly` filters. */
  list(s: TenantScope, userId: number, o: { limit?: number; before?: number; unreadOnly?: boolean } = {}): Promise<NotificationRow[]> {
    let q = this.db.k.selectFrom('notifications').selectAll().where('tenant_id', '=', s.tenant_id).where('user_id', '=', userId);
    if (o.before) q = q.where('id', '<', o.before);
    if (o.unreadOnly) q = q.where('read_at', 'is', null);
    return this.db.async.all(q.orderBy('id', 'desc').limit(o.limit ?? 50)) as Promise<NotificationRow[]>;
  }

  async unreadCount(s: TenantScope, userId: number): Promise<number> {
    const r = await this.db.async.first(
      this.db.k
        .selectFrom('notifications')
        .select((e) => e.fn.countAll<number>().as('n'))
        .where('tenant_id', '=', s.tenant_id)
        .where('user_id', '=', userId)
        .where('read_at', 'is', null),
    );
    return Number(r?.n ?? 0);
  }

  /** Marks the given ids (or all when `ids` is omitted) read; ids of other users or tenants are ignored. Returns rows changed. */
  markRead(s: TenantScope, userId: number, ids?: number[]): Promise<number> {
    let q = this.db.k
      .updateTable('notifications')
      .set({ read_at: new Date().toISOString() })
      .where('tenant_id', '=', s.tenant_id)
      .where('user_id', '=', userId)
      .where('read_at', 'is', null);
    if (ids) {
      if (ids.length === 0) return Promise.resolve(0);
      q = q.where('id', 'in', ids);
    }
    return this.db.async.run(q);
  }
}
