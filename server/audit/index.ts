/**
 * Append-only audit log. It is a subscriber of the event bus (`audit` events),
 * so domain modules announce what happened and never write this table.
 */
import { untilFree, type Db } from '../db';
import type { AuditEvent } from '../contract';
import type { EventBus, AuditPayload } from '../events';

export type { AuditEvent };

export interface AuditQuery {
  user_id?: number;
  action?: string;
  from?: string;
  to?: string;
  limit?: number;
  offset?: number;
}

/** Subscribes the audit writer to the bus. */
export function attachAudit(db: Db, bus: EventBus): void {
  const insert = db.sqlite.prepare(
    'INSERT INTO audit (ts, user_id, user_email, action, resource, ip, ua, meta) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  bus.on('audit', (p, m) => {
    // Work done through an API key names the key in `meta.key_id`.
    const meta = p.actor?.key_id !== undefined ? { ...p.meta, key_id: p.actor.key_id } : (p.meta ?? {});
    const write = () => insert.run(m.at, p.actor?.id ?? null, p.actor?.email ?? null, p.action, p.resource ?? null, p.request?.ip ?? null, p.request?.ua ?? null, JSON.stringify(meta));
    // Written at once when the database is free; while another program holds it, retried in the
    // background (10 minutes at most) without holding up the other listeners.
    void untilFree(write, 600_000).catch(() => undefined);
  });
}

/** Newest first. `action` matches exactly, or as a prefix when it ends with `.` or `*`. */
export async function queryAudit(db: Db, q: AuditQuery): Promise<AuditEvent[]> {
  let sel = db.k.selectFrom('audit').selectAll();
  if (q.user_id !== undefined) sel = sel.where('user_id', '=', q.user_id);
  if (q.action) {
    const a = q.action.replace(/\*$/, '');
    // A prefix as a range (`api_key.` ≤ action < `api_key/`): LIKE would read `_` as a wildcard.
    sel = a.endsWith('.') ? sel.where('action', '>=', a).where('action', '<', `${a.slice(0, -1)}/`) : sel.where('action', '=', a);
  }
  if (q.from) sel = sel.where('ts', '>=', q.from);
  if (q.to) sel = sel.where('ts', '<=', q.to);
  const rows = await sel.orderBy('id', 'desc').limit(q.limit ?? 100).offset(q.offset ?? 0).execute();
  return rows.map((r) => ({ ...r, meta: JSON.parse(r.meta) }));
}

export type { AuditPayload };
