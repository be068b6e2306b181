/**
 * The identity provider's metadata (OpenID discovery) as an openid-client
 * Configuration, cached per issuer and client for an hour, each network call
 * bounded. A failure is kept for 15 seconds, so a burst of sign-in clicks
 * while the provider is down does not become a burst of outbound requests;
 * the admin's Test and Save ask afresh.
 */
import type * as client from 'openid-client';
import { sha256Hex } from '../../lib/crypto';
import { lazy } from '../../lib/lazy';
import { isLoopbackUrl } from './settings';
import { OidcError } from './errors';

/** The OpenID client loads with the first sign-in, test or save: most installs never configure one. */
export const openid = lazy(() => import('openid-client'));

const CACHE_MS = 3_600_000;
const FAILURE_MS = 15_000;
/** Seconds: discovery, the JWKS, the token and userinfo calls. */
const TIMEOUT_S = 10;

export interface ClientSpec {
  issuer: string;
  client_id: string;
  /** Plain; '' for a public client. */
  client_secret: string;
}

interface Entry {
  at: number;
  failed: boolean;
  config: Promise<client.Configuration>;
}

export class Discovery {
  private cache = new Map<string, Entry>();

  constructor(private opts: { cacheMs?: number; timeoutS?: number } = {}) {}

  /**
   * The configuration for `spec`: cached, or discovered now (at most one
   * discovery in flight per key; `fresh` skips the cache). Throws
   * `OidcError('oidc_unavailable')` with the reason when the provider cannot
   * be reached or its metadata is wrong.
   */
  get(spec: ClientSpec, opts: { fresh?: boolean } = {}): Promise<client.Configuration> {
    const key = `${spec.issuer}\n${spec.client_id}\n${sha256Hex(spec.client_secret)}`;
    const hit = this.cache.get(key);
    if (hit && !opts.fresh && Date.now() - hit.at < (hit.failed ? FAILURE_MS : (this.opts.cacheMs ?? CACHE_MS))) return hit.config;
    const entry: Entry = { at: Date.now(), failed: false, config: this.discover(spec) };
    this.cache.set(key, entry);
    entry.config.catch(() => {
      entry.failed = true;
      entry.at = Date.now();
    });
    return entry.config;
  }

  /** Drops every cached configuration (settings saved). */
  clear(): void {
    this.cache.clear();
  }

  private async discover(spec: ClientSpec): Promise<client.Configuration> {
    let issuer: URL;
    try {
      issuer = new URL(spec.issuer);
    } catch {
      throw new OidcError('oidc_unavailable', 'the issuer is not a URL');
    }
    const insecure = issuer.protocol === 'http:' && isLoopbackUrl(issuer);
    const timeout = this.opts.timeoutS ?? TIMEOUT_S;
    const client = await openid();
    let found: client.Configuration;
    try {
      found = await client.discovery(issuer, spec.client_id, undefined, client.None(), { timeout, execute: insecure ? [client.allowInsecureRequests] : [] });
    } catch (e) {
      throw new OidcError('oidc_unavailable', `discovery failed: ${describe(e)}`);
    }
    const meta = found.serverMetadata();
    if (!meta.authorization_endpoint || !meta.token_endpoint) throw new OidcError('oidc_unavailable', 'the provider names no authorization or token endpoint');
    if (meta.code_challenge_methods_supported && !meta.code_challenge_methods_supported.includes('S256'))
      throw new OidcError('oidc_unavailable', 'the provider does not support PKCE with S256');
    // client_secret_basic is OpenID's default method; some providers only take the secret in the body.
    const methods = meta.token_endpoint_auth_methods_supported ?? ['client_secret_basic'];
    const auth =
      spec.client_secret === ''
        ? client.None()
        : !methods.includes('client_secret_basic') && methods.includes('client_secret_post')
          ? client.ClientSecretPost(spec.client_secret)
          : client.ClientSecretBasic(spec.client_secret);
    const config = new client.Configuration(meta, spec.client_id, spec.client_secret ? { client_secret: spec.client_secret } : {}, auth);
    config.timeout = timeout;
    if (insecure) client.allowInsecureRequests(config);
    // openid-client trusts an ID token from the token endpoint on TLS alone unless told otherwise; we check its
    // signature against the provider's published keys too (a proxy, a plain-http loopback provider, defence in depth).
    client.enableNonRepudiationChecks(config);
    return config;
  }
}

/** One line for logs, audit rows and the admin's error: openid-client's message and the provider's `error` when it sent one. */
export function describe(e: unknown): string {
  const err = e as { message?: string; error?: string; error_description?: string; cause?: { message?: string; code?: string } };
  const parts = [err?.error, err?.error_description, err?.message, err?.cause?.code ?? err?.cause?.message].filter(
    (x): x is string => typeof x === 'string' && x !== '',
  );
  return [...new Set(parts)].join(': ').slice(0, 300) || 'unknown error';
}
