import { portable } from './kit';

/**
 * A tenant's logo for its public pages (docs/tenants.md, "Step 4: branding"; owner: auth, TenantLogosRepo):
 * one row per tenant, the image as base64 text (at most 256 KiB of bytes, so a portable text column beats a
 * blob type the two dialects and the PostgreSQL copier spell differently) with its type and a content hash
 * (the public route's ETag). In the database, not the data dir: several instances on PostgreSQL serve it.
 */
export const tenantLogos = portable('20261207180500-tenant-logos', ({ schema: s, int }) => [
  s
    .createTable('tenant_logos')
    .addColumn('tenant_id', int, (c) => c.primaryKey().notNull().defaultTo(1))
    .addColumn('mime', 'text', (c) => c.notNull())
    .addColumn('etag', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull()),
]);
