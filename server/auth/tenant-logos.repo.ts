/**
 * A tenant's logo (docs/tenants.md, "Step 4: branding"): at most one per tenant, stored as base64 text with
 * its media type and content hash. Every statement names its tenant.
 */
import type { Db, TenantScope, Unit } from '../db';

/** A stored logo, decoded. */
export interface TenantLogo {
  mime: string;
  etag: string;
  bytes: Buffer;
}

export class TenantLogosRepo {
  constructor(private db: Db) {}

  /** The tenant's logo, or undefined when it has none. */
  async get(t: TenantScope): Promise<TenantLogo | undefined> {
    const r = await this.db.async.first(this.db.k.selectFrom('tenant_logos').select(['mime', 'etag', 'data']).where('tenant_id', '=', t.tenant_id));
    return r ? { mime: r.mime, etag: r.etag, bytes: Buffer.from(r.data, 'base64') } : undefined;
  }

  /** Sets (or replaces) the tenant's logo. */
  async put(t: TenantScope, logo: TenantLogo): Promise<void> {
    const k = this.db.k;
    const drop = k.deleteFrom('tenant_logos').where('tenant_id', '=', t.tenant_id);
    const insert = k.insertInto('tenant_logos').values({
      tenant_id: t.tenant_id,
      mime: logo.mime,
      etag: logo.etag,
      data: logo.bytes.toString('base64'),
      updated_at: new Date().toISOString(),
    });
    await this.db.async.unit(function* (tx): Unit<void> {
      yield* tx.run(drop);
      yield* tx.run(insert);
    });
  }

  /** Removes the tenant's logo; false when it had none (idempotent). */
  async remove(t: TenantScope): Promise<boolean> {
    return (await this.db.async.run(this.db.k.deleteFrom('tenant_logos').where('tenant_id', '=', t.tenant_id))) > 0;
  }
}
