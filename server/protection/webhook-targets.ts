/**
 * Webhook targets as the admin edits them, stored in the `webhook_targets`
 * setting with their signing keys encrypted under the install's secret key
 * (read back as `***`). The older single webhook URL (`webhook_url`, with an
 * optional `webhook_secret`) is one more target that takes every event of
 * tenant 1. A target belongs to a tenant: its admins see and change only
 * theirs, and it hears only its tenant's events (docs/tenants.md); another
 * tenant's id is `not_found`. `forDelivery()` is what the event module's
 * webhook sender reads.
 */
import { randomBytes } from 'node:crypto';
import { DEFAULT_TENANT, type TenantScope } from '../db';
import type { ActorRef, EventBus, WebhookTarget } from '../events';
import type { SettingsStore, WebhookTargetSetting } from '../settings';
import { AppError } from '../errors';
import { decrypt, encrypt, randomToken } from '../lib/crypto';

export const LEGACY_TARGET_ID = 'legacy';

export interface TargetView {
  id: string;
  url: string;
  events: string[];
  enabled: boolean;
  /** `***` when a signing key is set; the plain key only in the create answer. */
  secret: string;
}

export interface TargetInput {
  url?: string;
  events?: string[];
  enabled?: boolean;
  secret?: string;
}

const checkUrl = (url: string): string => {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new AppError('validation_failed', { field: 'url', reason: 'not a URL' }, { field: 'url' });
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new AppError('validation_failed', { field: 'url', reason: 'http(s) only' }, { field: 'url' });
  return url;
};

/** A stored target's tenant (one saved before tenants is tenant 1's). */
const tenantOf = (t: WebhookTargetSetting): number => t.tenant_id ?? DEFAULT_TENANT.tenant_id;

export class WebhookTargets {
  constructor(
    private settings: SettingsStore,
    private secretKey: Buffer,
    private bus: EventBus,
  ) {}

  /** The tenant's targets (the older single URL is tenant 1's). */
  list(s: TenantScope): TargetView[] {
    const out = this.settings
      .get('webhook_targets')
      .filter((t) => tenantOf(t) === s.tenant_id)
      .map((t) => this.present(t));
    const legacy = this.settings.get('webhook_url');
    if (legacy && s.tenant_id === DEFAULT_TENANT.tenant_id)
      out.push({ id: LEGACY_TARGET_ID, url: legacy, events: [], enabled: true, secret: this.settings.get('webhook_secret') ? '***' : '' });
    return out;
  }

  /** Adds a target of the tenant; without `secret` one is generated. The answer carries the plain key once. */
  async create(s: TenantScope, input: TargetInput, actor: ActorRef | null): Promise<TargetView> {
    const secret = input.secret ?? randomToken(32);
    const t: WebhookTargetSetting = {
      id: 'wh_' + randomBytes(6).toString('hex'),
      url: checkUrl(input.url ?? ''),
      events: input.events ?? [],
      enabled: input.enabled ?? true,
      secret: encrypt(this.secretKey, secret),
      tenant_id: s.tenant_id,
    };
    await this.save(s, (all) => [...all, t], actor, { created: t.id });
    return { ...this.present(t), secret };
  }

  /** Changes a target of the tenant; unknown id (another tenant's too) → `not_found`. */
  async update(s: TenantScope, id: string, input: TargetInput, actor: ActorRef | null): Promise<TargetView> {
    let t!: WebhookTargetSetting;
    await this.save(
      s,
      (all) => {
        const i = all.findIndex((x) => x.id === id && tenantOf(x) === s.tenant_id);
        if (i < 0) throw new AppError('not_found', { id });
        t = { ...all[i] };
        if (input.url !== undefined) t.url = checkUrl(input.url);
        if (input.events !== undefined) t.events = input.events;
        if (input.enabled !== undefined) t.enabled = input.enabled;
        if (input.secret !== undefined) t.secret = encrypt(this.secretKey, input.secret);
        return all.map((x, j) => (j === i ? t : x));
      },
      actor,
      { updated: id },
    );
    return this.present(t);
  }

  /**
   * Removes a target of the tenant; unknown id (another tenant's too) → `not_found`. Its pending deliveries
   * then fail as "target removed".
   */
  async remove(s: TenantScope, id: string, actor: ActorRef | null): Promise<void> {
    const mine = (t: WebhookTargetSetting) => t.id === id && tenantOf(t) === s.tenant_id;
    await this.save(
      s,
      (all) => {
        if (!all.some(mine)) throw new AppError('not_found', { id });
        return all.filter((t) => !mine(t));
      },
      actor,
      { removed: id },
    );
  }

  /** Sets or clears (empty url) the older single webhook URL (tenant 1's: a platform route) and its optional key. */
  async setLegacy(url: string, secret: string | undefined, actor: ActorRef | null): Promise<void> {
    await this.settings.set('webhook_url', url === '' ? '' : checkUrl(url));
    if (secret !== undefined) await this.settings.set('webhook_secret', secret === '' ? '' : encrypt(this.secretKey, secret));
    void this.bus.emit(DEFAULT_TENANT, 'audit', { action: 'admin.config_change', actor, resource: 'webhooks', meta: { legacy_url: url !== '' } });
  }

  /** Every tenant's enabled targets with plain keys and their tenant, for the sender (which matches an event's tenant). */
  forDelivery(): WebhookTarget[] {
    const out: WebhookTarget[] = this.settings
      .get('webhook_targets')
      .filter((t) => t.enabled)
      .map((t) => ({ id: t.id, tenant_id: tenantOf(t), url: t.url, events: t.events, secret: decrypt(this.secretKey, t.secret) }));
    const legacy = this.settings.get('webhook_url');
    const key = this.settings.get('webhook_secret');
    if (legacy)
      out.push({ id: LEGACY_TARGET_ID, tenant_id: DEFAULT_TENANT.tenant_id, url: legacy, events: [], secret: key ? decrypt(this.secretKey, key) : '' });
    return out;
  }

  /** Changes the list as one unit of work (two admins adding at once both keep their target); audited in the tenant. */
  private async save(
    s: TenantScope,
    change: (all: WebhookTargetSetting[]) => WebhookTargetSetting[],
    actor: ActorRef | null,
    meta: Record<string, unknown>,
  ): Promise<void> {
    await this.settings.update('webhook_targets', change);
    void this.bus.emit(s, 'audit', { action: 'admin.config_change', actor, resource: 'webhooks', meta });
  }

  private present(t: WebhookTargetSetting): TargetView {
    return { id: t.id, url: t.url, events: t.events, enabled: t.enabled, secret: t.secret ? '***' : '' };
  }
}
