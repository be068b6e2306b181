/**
 * The protection page's one read of the shares table (owner: shares; protection may not import that
 * module, and only reads here): how many live links outlive the share ceiling.
 */
import type { Db, TenantScope } from '../db';

export class ShareCeilingRepo {
  constructor(private db: Db) {}

  /** The tenant's links neither revoked nor expiring by `ceilingIso` (no expiry counts as outliving); 0 when there are none. */
  async countOutliving(scope: TenantScope, ceilingIso: string): Promise<number> {
    const row = await this.db.async.first(
      this.db.k
        .selectFrom('shares')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('tenant_id', '=', scope.tenant_id)
        .where('revoked_at', 'is', null)
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', ceilingIso)])),
    );
    return Number(row?.n ?? 0);
  }
}
