/**
 * The webhook_deliveries table (owned by events): one row per queued delivery, also the delivery log. A
 * delivery belongs to its event's tenant, and every statement names it (docs/tenants.md).
 */
import { sql } from 'kysely';
import type { Db } from '../db';
import type { WebhookDeliveriesTable } from '../db/tables';
import type { TenantScope } from '../db/tenant-tables';

export type Delivery = Omit<WebhookDeliveriesTable, 'body' | 'tenant_id'>;
export type DeliveryRow = Omit<WebhookDeliveriesTable, 'tenant_id'>;

const COLUMNS = ['id', 'target_id', 'url', 'event', 'status', 'attempts', 'response_code', 'error', 'created_at', 'updated_at'] as const;

export class WebhookDeliveriesRepo {
  constructor(private db: Db) {}

  /** A new pending delivery of the tenant. */
  async insert(s: TenantScope, d: Pick<WebhookDeliveriesTable, 'id' | 'target_id' | 'url' | 'event' | 'body'>, now: string): Promise<void> {
    await this.db.async.run(
      this.db.k.insertInto('webhook_deliveries').values({ ...d, tenant_id: s.tenant_id, status: 'pending', attempts: 0, created_at: now, updated_at: now }),
    );
  }

  /** One delivery of the tenant, or undefined (another tenant's too). */
  get(s: TenantScope, id: string): Promise<DeliveryRow | undefined> {
    return this.db.async.first(
      this.db.k
        .selectFrom('webhook_deliveries')
        .select([...COLUMNS, 'body'])
        .where('tenant_id', '=', s.tenant_id)
        .where('id', '=', id),
    );
  }

  /** The tenant's log, newest first, optionally of one target. */
  list(s: TenantScope, o: { targetId?: string; limit?: number } = {}): Promise<Delivery[]> {
    let q = this.db.k.selectFrom('webhook_deliveries').select(COLUMNS).where('tenant_id', '=', s.tenant_id);
    if (o.targetId) q = q.where('target_id', '=', o.targetId);
    return this.db.async.all(
      q
        .orderBy('created_at', 'desc')
        .orderBy('id')
        .limit(o.limit ?? 100),
    );
  }

  /**
   * Counts one attempt and sets its outcome, only while the row is still pending: a finished delivery is
   * never reopened or counted again by a late attempt. False when the row was not pending (or is another tenant's).
   */
  async recordAttempt(s: TenantScope, id: string, status: Delivery['status'], code: number | null, error: string | null, now: string): Promise<boolean> {
    const q = this.db.k
      .updateTable('webhook_deliveries')
      .set({ status, attempts: sql<number>`attempts + 1`, response_code: code, error, updated_at: now })
      .where('tenant_id', '=', s.tenant_id)
      .where('id', '=', id)
      .where('status', '=', 'pending');
    return (await this.db.async.run(q)) > 0;
  }

  /** Deletes the tenant's finished rows last changed before `before`; how many. */
  prune(s: TenantScope, before: string): Promise<number> {
    return this.db.async.run(
      this.db.k.deleteFrom('webhook_deliveries').where('tenant_id', '=', s.tenant_id).where('status', '!=', 'pending').where('updated_at', '<', before),
    );
  }
}
