/**
 * The OIDC settings as the running server holds them: read through a port on
 * the settings store, SERVICE_OIDC_* re-applied at every start (environment
 * wins), the admin's view and edit (an edit is saved only after discovery
 * against the issuer worked), and the provider's configuration for sign-in.
 */
import type * as client from 'openid-client';
import { DEFAULT_TENANT } from '../../db';
import { AppError } from '../../errors';
import type { ActorRef, EventBus, RequestMeta } from '../../events';
import type { OidcSettingsView, OidcTestResult } from '../../contract';
import { Discovery, describe } from './discovery';
import { OidcError } from './errors';
import { CALLBACK_PATH, check, isActive, merge, normalize, openSecret, overlayEnv, view, type OidcEnv, type OidcPatch, type OidcSettings } from './settings';

/** Where the settings live (the settings store's `oidc` key; wired by the composition root). */
export interface OidcStore {
  load(): Record<string, unknown> | null;
  save(value: Record<string, string | boolean>): Promise<void>;
}

export interface OidcConfigDeps {
  store: OidcStore;
  env: OidcEnv;
  secretKey: Buffer;
  /** SERVICE_PUBLIC_URL ('' = the origin each request came to). */
  publicUrl: string;
  bus: EventBus;
  discovery?: Discovery;
}

export class OidcConfig {
  private discovery: Discovery;

  constructor(private d: OidcConfigDeps) {
    this.discovery = d.discovery ?? new Discovery();
  }

  /** The stored settings (defaults for whatever was never set). */
  current(): OidcSettings {
    return normalize(this.d.store.load());
  }

  /** Configured and enabled: sign-in is offered. */
  active(): boolean {
    return isActive(this.current());
  }

  /** The sign-in button's name. */
  label(): string {
    return this.current().label || 'SSO';
  }

  /**
   * Writes every set SERVICE_OIDC_* value over the stored settings (at each
   * start; idempotent). Throws an Error naming the variable when the result
   * does not pass the settings' checks, so a misconfigured server says so at
   * start instead of at the first sign-in.
   */
  async applyEnvironment(): Promise<void> {
    const now = this.current();
    const next = overlayEnv(now, this.d.env, this.d.secretKey);
    if (next === now) return;
    try {
      check(next);
    } catch (e) {
      const field = e instanceof AppError ? String(e.params.field) : '?';
      throw new Error(`SERVICE_OIDC_${field.toUpperCase()}: ${e instanceof AppError ? e.params.reason : (e as Error).message}`);
    }
    await this.save(next);
  }

  /** The callback URL the provider must know: the configured one, else the public URL's or this request's origin. */
  redirectUrl(origin: string): string {
    const s = this.current();
    return s.redirect_url || `${this.d.publicUrl || origin}${CALLBACK_PATH}`;
  }

  view(origin: string): OidcSettingsView {
    return view(this.current(), this.d.env, this.redirectUrl(origin));
  }

  /**
   * Applies an admin's edit: checked field by field (`validation_failed`), then,
   * when the result is configured and enabled, discovery must work against the
   * issuer (`validation_failed` on `issuer` with the reason) before anything is
   * saved. Audited as `admin.config_change`. Answers the saved view.
   */
  async update(patch: OidcPatch, origin: string, who: { actor: ActorRef | null; request?: RequestMeta }): Promise<OidcSettingsView> {
    const next = merge(this.current(), patch, this.d.env, this.d.secretKey);
    if (isActive(next)) await this.probe(next);
    await this.save(next);
    const changed = Object.keys(patch).filter((k) => k !== 'client_secret' || patch.client_secret !== '***');
    await this.d.bus.emit(DEFAULT_TENANT, 'audit', {
      action: 'admin.config_change',
      actor: who.actor,
      request: who.request,
      resource: 'auth.oidc',
      meta: { fields: changed },
    });
    return this.view(origin);
  }

  /** Runs discovery for the stored settings with `patch` over them (nothing saved); `validation_failed` on `issuer` when it fails. */
  async test(patch: OidcPatch): Promise<OidcTestResult> {
    const next = merge(this.current(), { ...patch, enabled: true }, this.d.env, this.d.secretKey);
    if (!isActive(next))
      throw new AppError(
        'validation_failed',
        { field: 'issuer', reason: 'issuer and client id are required' },
        { field: 'issuer', reason: 'issuer and client id are required' },
      );
    const meta = (await this.probe(next)).serverMetadata();
    return {
      ok: true,
      issuer: meta.issuer,
      authorization_endpoint: meta.authorization_endpoint ?? '',
      token_endpoint: meta.token_endpoint ?? '',
      userinfo_endpoint: meta.userinfo_endpoint ?? null,
      scopes_supported: meta.scopes_supported ?? [],
      claims_supported: meta.claims_supported ?? [],
    };
  }

  /** The provider's configuration for `s` (cached discovery; `fresh` asks again). Throws `OidcError('oidc_unavailable')`. */
  provider(s: OidcSettings, fresh = false): Promise<client.Configuration> {
    return this.discovery.get({ issuer: s.issuer, client_id: s.client_id, client_secret: openSecret(s, this.d.secretKey) }, { fresh });
  }

  private async probe(s: OidcSettings): Promise<client.Configuration> {
    try {
      return await this.provider(s, true);
    } catch (e) {
      const reason = e instanceof OidcError ? e.reason : describe(e);
      throw new AppError('validation_failed', { field: 'issuer', reason }, { field: 'issuer', reason });
    }
  }

  private async save(s: OidcSettings): Promise<void> {
    await this.d.store.save({ ...s });
    this.discovery.clear();
  }
}
