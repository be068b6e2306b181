/**
 * The OIDC authorization code flow: `start` records a pending sign-in (PKCE
 * S256 verifier, state, nonce, where to return) and names the provider's
 * authorization URL; `callback` checks the state against the one this browser
 * holds (constant time), takes the pending row (one-time, 10 minutes), lets
 * openid-client exchange the code and validate the ID token (signature,
 * issuer, audience, nonce, expiry), maps the claims onto an account and
 * signs it in exactly like a password login. Every refusal is audited as
 * `auth.failed` with its reason and thrown as an `OidcError`.
 */
import type * as client from 'openid-client';
import type { TenantScope } from '../../db';
import type { EventBus, RequestMeta } from '../../events';
import { safeEqual } from '../../lib/crypto';
import type { AuthService, LoginResult } from '../auth.service';
import type { OidcAccounts } from './accounts';
import { identityOf, missingMapped } from './claims';
import type { OidcConfig } from './config.service';
import { describe, openid } from './discovery';
import { OidcError } from './errors';
import { safeNext } from './next';
import type { PendingLogins } from './pending.repo';
import { isActive, type OidcSettings } from './settings';

export interface OidcSignInDeps {
  config: OidcConfig;
  pending: PendingLogins;
  accounts: OidcAccounts;
  auth: AuthService;
  bus: EventBus;
  warn: (msg: string) => void;
}

export class OidcSignIn {
  constructor(private d: OidcSignInDeps) {}

  /**
   * Starts a sign-in: answers the provider's authorization URL and the state
   * the caller must keep in this browser (a cookie) for the callback. `next`
   * is kept only when it is a local path (else `/`). Throws
   * `OidcError('oidc_unavailable')` when sign-in is not configured, the
   * provider cannot be reached, or too many sign-ins are waiting. The sign-in is stored in tenant `s` (the
   * request's) and the callback must come back to it.
   */
  async start(s: TenantScope, next: unknown, origin: string, req: RequestMeta): Promise<{ url: string; state: string }> {
    return this.audited(s, req, async () => {
      const o = this.d.config.current();
      if (!isActive(o)) throw new OidcError('oidc_unavailable', 'OIDC sign-in is not configured');
      const provider = await this.d.config.provider(o);
      const client = await openid();
      const state = client.randomState();
      const nonce = client.randomNonce();
      const verifier = client.randomPKCECodeVerifier();
      const redirect = this.d.config.redirectUrl(origin);
      if (!(await this.d.pending.add(s, state, { issuer: o.issuer, code_verifier: verifier, nonce, next: safeNext(next), redirect_uri: redirect })))
        throw new OidcError('oidc_unavailable', 'too many sign-ins are waiting at the provider');
      const url = client.buildAuthorizationUrl(provider, {
        redirect_uri: redirect,
        scope: o.scopes,
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        nonce,
      });
      return { url: url.href, state };
    });
  }

  /**
   * Completes a sign-in from the provider's redirect (`query`) and the state
   * this browser kept (`browserState`). Answers the session (cookie token) and
   * the local path to return to. The started sign-in is found only in tenant `s`, the request's.
   */
  async callback(t: TenantScope, query: URLSearchParams, browserState: string | undefined, req: RequestMeta): Promise<{ login: LoginResult; next: string }> {
    return this.audited(t, req, async () => {
      const state = query.get('state') ?? '';
      if (!browserState) throw new OidcError('oidc_state', 'no sign-in was started in this browser');
      if (!safeEqual(state, browserState)) throw new OidcError('oidc_state', 'the state is not the one this browser started');
      const pending = await this.d.pending.take(t, state);
      if (!pending) throw new OidcError('oidc_state', 'the state is unknown, used or older than 10 minutes');
      const s = this.d.config.current();
      if (!isActive(s) || s.issuer !== pending.issuer) throw new OidcError('oidc_unavailable', 'the OIDC settings changed during the sign-in');
      if (query.has('error')) throw new OidcError('oidc_denied', `${query.get('error')}: ${query.get('error_description') ?? ''}`.slice(0, 300));
      const provider = await this.d.config.provider(s);
      // The redirect URI of the request, not this request's own address (a proxy may have rewritten it).
      const here = new URL(pending.redirect_uri);
      here.search = query.toString();
      const client = await openid();
      const tokens = await client
        .authorizationCodeGrant(provider, here, {
          pkceCodeVerifier: pending.code_verifier,
          expectedState: state,
          expectedNonce: pending.nonce,
          idTokenExpected: true,
        })
        .catch((e: unknown) => {
          throw classify(e, client);
        });
      const claims = await this.claims(provider, tokens, s);
      const user = await this.d.accounts.resolve(pending, s.issuer, identityOf(claims, s), s);
      return { login: await this.d.auth.issue(user, req, 'oidc'), next: pending.next };
    });
  }

  /** Deletes the tenant's pending sign-ins older than 10 minutes (hourly). */
  sweep(t: TenantScope): Promise<number> {
    return this.d.pending.sweep(t);
  }

  /** The ID token's claims, completed from userinfo when a mapped claim is missing from the token. */
  private async claims(
    provider: client.Configuration,
    tokens: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers,
    s: OidcSettings,
  ): Promise<Record<string, unknown>> {
    const idClaims = tokens.claims()! as Record<string, unknown>;
    if (!missingMapped(idClaims, s) || !provider.serverMetadata().userinfo_endpoint) return idClaims;
    try {
      const info = await (await openid()).fetchUserInfo(provider, tokens.access_token, String(idClaims.sub));
      return { ...info, ...idClaims };
    } catch (e) {
      throw new OidcError('oidc_token', `userinfo: ${describe(e)}`);
    }
  }

  /** Runs a sign-in step; a refusal is audited `auth.failed` in the tenant `s` it was tried in. */
  private async audited<T>(s: TenantScope, req: RequestMeta, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      const f = e instanceof OidcError ? e : new OidcError('oidc_unavailable', describe(e));
      // These point at the provider or the settings, not at the person signing in.
      if (f.code === 'oidc_unavailable' || f.code === 'oidc_token') this.d.warn(`OIDC sign-in refused (${f.code}): ${f.reason}`);
      await this.d.bus.emit(s, 'audit', { action: 'auth.failed', actor: null, request: req, meta: { kind: 'oidc', reason: f.code, detail: f.reason } });
      throw f;
    }
  }
}

/** openid-client's refusals as sign-in failures: a refused code, a bad token, or a provider that did not answer properly. */
function classify(e: unknown, client: typeof import('openid-client')): OidcError {
  if (e instanceof OidcError) return e;
  if (e instanceof client.ResponseBodyError) return new OidcError(e.error === 'invalid_grant' ? 'oidc_code' : 'oidc_unavailable', describe(e));
  const code = (e as { code?: string }).code ?? '';
  const name = (e as { name?: string }).name ?? '';
  if (
    e instanceof TypeError ||
    name === 'TimeoutError' ||
    name === 'AbortError' ||
    code === 'OAUTH_RESPONSE_IS_NOT_CONFORM' ||
    code === 'OAUTH_RESPONSE_IS_NOT_JSON'
  )
    return new OidcError('oidc_unavailable', describe(e));
  return new OidcError('oidc_token', describe(e));
}
