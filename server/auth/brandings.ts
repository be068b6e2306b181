/**
 * Tenant branding on the public pages (docs/tenants.md, "Step 4: branding"): a tenant's name, accent colour
 * and logo. Name and colour live in `tenants.branding` (with the logo's hash, so a page names the logo's
 * version without reading it); the logo's bytes in `tenant_logos`. Every tenant's branding is held in memory
 * (a page render reads no row), reloaded after each change here and on the other instances' notices.
 * Single-tenant mode has tenant 1's alone: its pages change only once its admin sets something.
 */
import { createHash } from 'node:crypto';
import { AppError } from '../errors';
import type { EventBus, ActorRef, RequestMeta } from '../events';
import type { ChangeChannel, TenantScope } from '../db';
import { reloadOn } from '../db/channel';
import type { TenantRecordsRepo } from './tenant-records.repo';
import type { TenantLogo, TenantLogosRepo } from './tenant-logos.repo';

/** What a tenant's public pages show; every field optional (nothing set: the pages as they always were). */
export interface Branding {
  name?: string;
  /** `#rrggbb`, nothing else (it is written into the page's CSS). */
  colour?: string;
  /** The logo's content hash (its URL's version and ETag) when the tenant has one. */
  logo?: string;
}

/** The fields an operator or a tenant admin sets; the logo has its own upload. */
export type BrandingText = Pick<Branding, 'name' | 'colour'>;

export const COLOUR = /^#[0-9a-fA-F]{6}$/;
/** The largest logo accepted, in bytes. */
export const LOGO_MAX_BYTES = 256 * 1024;
const NOTICE = 'branding.changed';

interface Ctx {
  actor: ActorRef | null;
  request?: RequestMeta;
}

/**
 * The image types a logo may have, known by their first bytes (never by a declared type). SVG is refused:
 * it may carry script, and an image route is no place to sanitise markup.
 */
function sniff(b: Buffer): string | null {
  if (b.length >= 8 && b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg';
  if (b.length >= 12 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP') return 'image/webp';
  return null;
}

/** Keeps only well-formed fields of a stored branding object (the column predates these rules). */
function clean(stored: Record<string, string>): Branding {
  const b: Branding = {};
  if (typeof stored.name === 'string' && stored.name.trim()) b.name = stored.name.trim();
  if (typeof stored.colour === 'string' && COLOUR.test(stored.colour)) b.colour = stored.colour.toLowerCase();
  if (typeof stored.logo === 'string' && /^[\w-]{1,64}$/.test(stored.logo)) b.logo = stored.logo;
  return b;
}

export class Brandings {
  private byTenant = new Map<number, Branding>();
  private channel: ChangeChannel | null = null;

  constructor(
    private records: TenantRecordsRepo,
    private logos: TenantLogosRepo,
    private bus: EventBus,
  ) {}

  /** Reads every tenant's branding again (at start, after a change, on another instance's notice). */
  async load(): Promise<void> {
    const next = new Map<number, Branding>();
    for (const t of await this.records.all()) {
      const b = clean(t.branding);
      if (Object.keys(b).length) next.set(t.id, b);
    }
    this.byTenant = next;
  }

  /** The tenant's branding as its pages show it; undefined when it has none (the pages stay plain). */
  of(t: TenantScope): Branding | undefined {
    return this.byTenant.get(t.tenant_id);
  }

  /** The branding stored for a tenant, including what `of` would drop (an empty object when none). */
  async get(t: TenantScope): Promise<Branding> {
    return clean((await this.tenant(t)).branding);
  }

  /** Replaces the tenant's name and colour (absent fields are cleared); the logo stays. `not_found` when gone. */
  async setText(t: TenantScope, text: BrandingText, ctx: Ctx): Promise<Branding> {
    const { logo } = await this.get(t);
    return this.write(t, { ...text, ...(logo && { logo }) }, ctx, 'name, colour');
  }

  /**
   * Sets the tenant's logo from its bytes: PNG, JPEG or WebP (else 415 `unsupported_media_type`), at most
   * `LOGO_MAX_BYTES` (else 413 `payload_too_large`). `not_found` when the tenant is gone.
   */
  async setLogo(t: TenantScope, bytes: Buffer, ctx: Ctx): Promise<Branding> {
    if (bytes.length > LOGO_MAX_BYTES) throw new AppError('payload_too_large', { max: LOGO_MAX_BYTES });
    const mime = sniff(bytes);
    if (!mime) throw new AppError('unsupported_media_type', { ext: 'logo' }, { types: ['image/png', 'image/jpeg', 'image/webp'] });
    const before = await this.get(t);
    const etag = createHash('sha256').update(bytes).digest('base64url').slice(0, 22);
    await this.logos.put(t, { mime, etag, bytes });
    return this.write(t, { ...before, logo: etag }, ctx, 'logo');
  }

  /** Removes the tenant's logo (idempotent); `not_found` when the tenant is gone. */
  async removeLogo(t: TenantScope, ctx: Ctx): Promise<Branding> {
    const { logo: _gone, ...rest } = await this.get(t);
    await this.logos.remove(t);
    return this.write(t, rest, ctx, 'logo');
  }

  /** The tenant's logo bytes, or undefined. */
  logo(t: TenantScope): Promise<TenantLogo | undefined> {
    return this.logos.get(t);
  }

  /**
   * The branding a platform change of a tenant stores: the operator's name and colour over the logo the
   * tenant has (the logo is never set by a JSON field).
   */
  async merged(t: TenantScope, text: BrandingText): Promise<Branding> {
    const { logo } = await this.get(t);
    return { ...text, ...(logo && { logo }) };
  }

  /** After a write to `tenants` elsewhere (the platform routes): this instance reloads now, the others on the notice. */
  async changed(): Promise<void> {
    await this.load();
    this.channel?.publish(NOTICE, null);
  }

  attachChannel(channel: ChangeChannel): void {
    this.channel = channel;
    // The directory's notice too: a tenant created, changed or deleted by the operator on another instance.
    reloadOn(channel, [NOTICE, 'tenants.changed'], () => this.load());
  }

  private async tenant(t: TenantScope) {
    const row = await this.records.byId(t.tenant_id);
    if (!row) throw new AppError('not_found');
    return row;
  }

  private async write(t: TenantScope, b: Branding, ctx: Ctx, fields: string): Promise<Branding> {
    if (!(await this.records.update(t.tenant_id, { branding: b as Record<string, string> }))) throw new AppError('not_found');
    await this.changed();
    await this.bus.emit(t, 'audit', { action: 'tenant.branding', actor: ctx.actor, request: ctx.request, resource: `tenant:${t.tenant_id}`, meta: { fields } });
    return clean(b as Record<string, string>);
  }
}
