/** Request bodies of /api/platform/tenants (docs/tenants.md, "Who is who"). */
import { z } from '../validate';
import { COLOUR } from '../../auth';

/** A DNS label: what a host name's first part and the `/t/<slug>/` prefix may hold. */
const slug = z.string().regex(/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/);
const hostname = z
  .string()
  .max(253)
  .transform((h) => h.trim().toLowerCase())
  .pipe(z.string().regex(/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/));
const quotas = z.strictObject({
  bytes: z.number().int().min(0).optional(),
  files: z.number().int().min(0).optional(),
  people: z.number().int().min(0).optional(),
  links: z.number().int().min(0).optional(),
  egress_share: z.number().int().min(0).max(100).optional(),
});
/** Name and colour of the public pages (the logo has its own upload: `PUT …/:id/logo`). */
export const branding = z.strictObject({
  name: z.string().trim().max(100).optional(),
  colour: z.string().regex(COLOUR).optional(),
});
const fields = {
  slug,
  name: z.string().trim().min(1).max(100),
  hostnames: z.array(hostname).max(20),
  quotas,
  branding,
};

export const tenantBody = z.strictObject({
  ...fields,
  hostnames: fields.hostnames.optional(),
  quotas: quotas.optional(),
  branding: branding.optional(),
  admin: z.strictObject({ email: z.string().max(320), username: z.string().max(64).optional(), password: z.string().max(1024) }),
});

export const tenantPatch = z.strictObject({
  slug: slug.optional(),
  name: fields.name.optional(),
  hostnames: fields.hostnames.optional(),
  status: z.enum(['active', 'suspended']).optional(),
  quotas: quotas.optional(),
  branding: branding.optional(),
});
