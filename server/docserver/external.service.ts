/**
 * The external services (spec: External service; Admin: external services):
 * the document server (`docserver`) and the diagram editor (`diagram`), one
 * row each in `external_services`. The shared JWT secret is sealed with the
 * install's key and reads back as `***`. The environment
 * (SERVICE_DOCSERVER_URL, _JWT, _CALLBACK_URL) is re-applied to the stored
 * row at every start and marks it `env_managed`; the admin cannot change such
 * a row (it would be overwritten at the next start).
 */
import type { ExternalService } from '../contract';
import type { Db } from '../db';
import type { ExternalServicesTable } from '../db/tables';
import { AppError, validation } from '../errors';
import { decrypt, encrypt } from '../lib/crypto';

export const EXTERNAL_NAMES = ['docserver', 'diagram'] as const;
export type ExternalName = (typeof EXTERNAL_NAMES)[number];
/** What the admin form shows for a stored secret. */
export const MASK = '***';

/** The document server as the integration uses it; present only when both URL and secret are set. */
export interface DocserverSettings {
  url: string;
  secret: string;
  /** Base URL the document server uses to reach this service ('' = the public URL or the request's). */
  callbackUrl: string;
}

export interface ExternalEnv {
  url: string;
  jwt_secret: string;
  callback_url: string;
}

export const isExternalName = (v: string): v is ExternalName => (EXTERNAL_NAMES as readonly string[]).includes(v);

/** An http(s) URL without a trailing slash, '' allowed (unsets). */
export function normaliseUrl(raw: string, field: string): string {
  const v = raw.trim();
  if (v === '') return '';
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw validation(field, 'must be an http(s) URL');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw validation(field, 'must be an http(s) URL');
  if (u.username || u.password || u.search || u.hash) throw validation(field, 'must be a plain base URL');
  return v.replace(/\/+$/, '');
}

/**
 * How long a row read is taken as current. `/api/capabilities` and the app page's policy ask on every
 * request (several times each), and on a PostgreSQL server a network hop away each read held the event loop
 * for a round trip (bench/pg-latency.ts: the capabilities probe at p50 113 ms, the 4 KiB rate down to
 * 270/s). Past this age the row kept is still answered while a fresh one is read off the event loop
 * (`db.async`); this instance's own writes drop it at once, another instance's are seen within about this time.
 */
const ROW_TTL_MS = 2000;

export class ExternalServices {
  private rows = new Map<ExternalName, { row: ExternalServicesTable | undefined; at: number; refreshing?: boolean }>();

  /** `ttlMs`: how long a row read is taken as current (tests shorten it). */
  constructor(private db: Db, private secretKey: Buffer, private ttlMs = ROW_TTL_MS) {}

  private query(name: ExternalName) {
    return this.db.k.selectFrom('external_services').selectAll().where('name', '=', name);
  }

  private row(name: ExternalName): ExternalServicesTable | undefined {
    const hit = this.rows.get(name);
    if (!hit) {
      const row = this.db.first(this.query(name));
      this.rows.set(name, { row, at: Date.now() });
      return row;
    }
    if (Date.now() - hit.at >= this.ttlMs && !hit.refreshing) {
      hit.refreshing = true;
      this.db.async.first(this.query(name)).then(
        // A write of this instance meanwhile dropped the entry: its own read is the fresher one.
        (row) => this.rows.get(name) === hit && this.rows.set(name, { row, at: Date.now() }),
        () => (hit.refreshing = false), // the database is away: the kept row serves, the next ask tries again
      );
    }
    return hit.row;
  }

  /** Every known service, stored or not, in name order. */
  list(): ExternalService[] {
    return EXTERNAL_NAMES.map((n) => this.view(n));
  }

  view(name: ExternalName): ExternalService {
    const r = this.row(name);
    return {
      name,
      url: r?.url ?? '',
      enabled: this.enabled(name),
      healthy: r?.healthy === null || r?.healthy === undefined ? null : r.healthy === 1,
      last_check: r?.last_check ?? null,
      env_managed: r?.env_managed === 1,
      jwt_secret: r?.jwt_secret ? MASK : '',
      callback_url: r?.callback_url ?? '',
    };
  }

  /** The document server needs a URL and the secret; the diagram editor a URL. */
  enabled(name: ExternalName): boolean {
    const r = this.row(name);
    if (!r?.url) return false;
    return name === 'diagram' || r.jwt_secret !== '';
  }

  /** The document server's settings, or null when it is not configured (rule 4). */
  docserver(): DocserverSettings | null {
    const r = this.row('docserver');
    if (!r?.url || !r.jwt_secret) return null;
    return { url: r.url, secret: decrypt(this.secretKey, r.jwt_secret), callbackUrl: r.callback_url };
  }

  /** The diagram editor's URL, '' when unset. */
  diagramUrl(): string {
    return this.row('diagram')?.url ?? '';
  }

  /**
   * The admin's PUT: `url` ('' unsets), `jwt_secret` (absent or `***` keeps the
   * stored one, '' clears it), `callback_url` (docserver only). A row the
   * environment manages → `conflict`.
   */
  put(name: ExternalName, input: { url: string; jwt_secret?: string; callback_url?: string }): { before: ExternalService; after: ExternalService } {
    const before = this.view(name);
    if (before.env_managed) throw new AppError('conflict', { reason: 'set by the environment (SERVICE_DOCSERVER_*); change it there' });
    const url = normaliseUrl(input.url, 'url');
    const cur = this.row(name);
    let secret = cur?.jwt_secret ?? '';
    if (input.jwt_secret !== undefined && input.jwt_secret !== MASK) secret = input.jwt_secret === '' ? '' : encrypt(this.secretKey, input.jwt_secret);
    const callback = input.callback_url === undefined ? (cur?.callback_url ?? '') : normaliseUrl(input.callback_url, 'callback_url');
    if (name === 'diagram' && input.jwt_secret) throw validation('jwt_secret', 'the diagram editor takes no secret');
    this.upsert(name, { url, jwt_secret: secret, callback_url: name === 'docserver' ? callback : '', env_managed: 0, reset: cur?.url !== url });
    return { before, after: this.view(name) };
  }

  /**
   * At every start: when SERVICE_DOCSERVER_URL or _JWT is set, the
   * environment's three values replace the stored docserver row, which is
   * then `env_managed`; without them a row the environment used to manage
   * keeps its values and becomes editable (SERVICE_DOCSERVER_CALLBACK_URL
   * alone only sets the callback URL).
   */
  applyEnvironment(env: ExternalEnv): void {
    const cur = this.row('docserver');
    if (!env.url && !env.jwt_secret) {
      if (cur?.env_managed) this.db.run(this.db.k.updateTable('external_services').set({ env_managed: 0 }).where('name', '=', 'docserver'));
      this.rows.clear();
      // The callback URL alone leaves the server's address and secret to the admin.
      if (env.callback_url) this.upsert('docserver', { url: cur?.url ?? '', jwt_secret: cur?.jwt_secret ?? '', callback_url: normaliseUrl(env.callback_url, 'SERVICE_DOCSERVER_CALLBACK_URL'), env_managed: 0, reset: false });
      return;
    }
    const url = normaliseUrl(env.url, 'SERVICE_DOCSERVER_URL');
    const same = cur && cur.url === url && cur.jwt_secret && decrypt(this.secretKey, cur.jwt_secret) === env.jwt_secret;
    const secret = same ? cur.jwt_secret : env.jwt_secret ? encrypt(this.secretKey, env.jwt_secret) : '';
    this.upsert('docserver', { url, jwt_secret: secret, callback_url: normaliseUrl(env.callback_url, 'SERVICE_DOCSERVER_CALLBACK_URL'), env_managed: 1, reset: cur?.url !== url });
  }

  /** Records a health probe's outcome. */
  recordCheck(name: ExternalName, healthy: boolean): void {
    this.db.run(this.db.k.updateTable('external_services').set({ healthy: healthy ? 1 : 0, last_check: new Date().toISOString() }).where('name', '=', name));
    this.rows.delete(name);
  }

  private upsert(name: ExternalName, v: { url: string; jwt_secret: string; callback_url: string; env_managed: number; reset: boolean }): void {
    const now = new Date().toISOString();
    const health = v.reset ? { healthy: null, last_check: null } : {};
    this.db.run(
      this.db.k
        .insertInto('external_services')
        .values({ name, url: v.url, jwt_secret: v.jwt_secret, callback_url: v.callback_url, env_managed: v.env_managed, updated_at: now, healthy: null, last_check: null })
        .onConflict((oc) => oc.column('name').doUpdateSet({ url: v.url, jwt_secret: v.jwt_secret, callback_url: v.callback_url, env_managed: v.env_managed, updated_at: now, ...health })),
    );
    this.rows.delete(name);
  }
}
