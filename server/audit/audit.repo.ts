/**
 * The audit table (owned by audit): append-only rows, read newest first. Every statement names its tenant
 * (docs/tenants.md): a row is written in one tenant and read only there.
 */
import type { Db } from '../db';
import type { TenantScope } from '../db/tenant-tables';
import type { AuditEvent } from '../contract';

export interface AuditQuery {
  user_id?: number;
  action?: string;
  from?: string;
  to?: string;
  limit?: number;
  offset?: number;
}

/** An event to record: the spec's Audit event before it has an id. */
export type AuditRow = Omit<AuditEvent, 'id'>;

/** The columns an event has (not `selectAll`: the row also holds `tenant_id`, which no answer shows). */
const COLUMNS = ['id', 'ts', 'user_id', 'user_email', 'action', 'resource', 'ip', 'ua', 'meta'] as const;

export class AuditRepo {
  constructor(private db: Db) {}

  /** Appends one row in the tenant. */
  async insert(s: TenantScope, r: AuditRow): Promise<void> {
    await this.db.async.run(this.db.k.insertInto('audit').values({ ...r, tenant_id: s.tenant_id, meta: JSON.stringify(r.meta) }));
  }

  /** The tenant's rows, newest first. `action` matches exactly, or as a prefix when it ends with `.` or `*`. */
  async query(s: TenantScope, q: AuditQuery): Promise<AuditEvent[]> {
    let sel = this.db.k.selectFrom('audit').select(COLUMNS).where('tenant_id', '=', s.tenant_id);
    if (q.user_id !== undefined) sel = sel.where('user_id', '=', q.user_id);
    if (q.action) {
      const a = q.action.replace(/\*$/, '');
      // A prefix as a range (`api_key.` ≤ action < `api_key/`): LIKE would read `_` as a wildcard.
      sel = a.endsWith('.') ? sel.where('action', '>=', a).where('action', '<', `${a.slice(0, -1)}/`) : sel.where('action', '=', a);
    }
    if (q.from) sel = sel.where('ts', '>=', q.from);
    if (q.to) sel = sel.where('ts', '<=', q.to);
    const rows = await this.db.async.all(
      sel
        .orderBy('id', 'desc')
        .limit(q.limit ?? 100)
        .offset(q.offset ?? 0),
    );
    return rows.map((r) => ({ ...r, meta: JSON.parse(r.meta) }));
  }
}
