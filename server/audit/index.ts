/**
 * Append-only audit log. It is a subscriber of the event bus (`audit` events),
 * so domain modules announce what happened and never write this table.
 */
import { isBusy, untilFree, type Db, type TenantScope } from '../db';
import type { AuditEvent } from '../contract';
import type { EventBus, AuditPayload } from '../events';
import { AuditRepo, type AuditQuery } from './audit.repo';

export type { AuditEvent, AuditQuery };

/** Subscribes the audit writer to the bus. A row is written in its event's tenant (the actor's: docs/tenants.md). */
export function attachAudit(db: Db, bus: EventBus): void {
  const repo = new AuditRepo(db);
  bus.on('audit', async (p, m) => {
    // Work done through an API key names the key in `meta.key_id`.
    const meta = p.actor?.key_id !== undefined ? { ...p.meta, key_id: p.actor.key_id } : (p.meta ?? {});
    const write = () =>
      repo.insert(m.tenant, {
        ts: m.at,
        user_id: p.actor?.id ?? null,
        user_email: p.actor?.email ?? null,
        action: p.action,
        resource: p.resource ?? null,
        ip: p.request?.ip ?? null,
        ua: p.request?.ua ?? null,
        meta,
      });
    // Written before the event's publication ends; while another program holds the database past a write's
    // usual wait, retried in the background (10 minutes at most) without holding up the other listeners.
    await write().catch((e: unknown) => {
      if (!isBusy(e)) throw e;
      void untilFree(write, 600_000).catch(() => undefined);
    });
  });
}

/**
 * The tenant's audit rows, newest first. `action` matches exactly, or as a prefix when it ends with `.` or `*`.
 * The platform operator's read over every tenant is step 2's (docs/tenants.md).
 */
export function queryAudit(db: Db, s: TenantScope, q: AuditQuery): Promise<AuditEvent[]> {
  return new AuditRepo(db).query(s, q);
}

export type { AuditPayload };
