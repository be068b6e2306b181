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
import { AppError, validation } from '../errors';
import { decrypt, encrypt } from '../lib/crypto';
import { ExternalServicesRepo, type ExternalRow, type ExternalValues } from './external-services.repo';

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

/** A change the environment would undo at the next start → `conflict`. */
function refuseEnvManaged(row: ExternalRow | undefined): void {
  if (row?.env_managed) throw new AppError('conflict', { reason: 'set by the environment (SERVICE_DOCSERVER_*); change it there' });
}

export class ExternalServices {
  private rows = new Map<ExternalName, { row: ExternalRow | undefined; at: number; refreshing?: boolean }>();
  private repo: ExternalServicesRepo;

  /** `ttlMs`: how long a row read is taken as current (tests shorten it). */
  constructor(
    db: Db,
    private secretKey: Buffer,
    private ttlMs = ROW_TTL_MS,
  ) {
    this.repo = new ExternalServicesRepo(db);
  }

  /** Reads every service's row (awaited where the service is built): every later ask is answered from memory. */
  async load(): Promise<void> {
    for (const name of EXTERNAL_NAMES) this.rows.set(name, { row: await this.repo.read(name), at: Date.now() });
  }

  private row(name: ExternalName): ExternalRow | undefined {
    // Before `load()` a service reads as unset while its row is fetched.
    const hit = this.rows.get(name) ?? this.rows.set(name, { row: undefined, at: -Infinity }).get(name)!;
    if (Date.now() - hit.at >= this.ttlMs && !hit.refreshing) {
      hit.refreshing = true;
      this.repo.read(name).then(
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
    return this.viewOf(name, this.row(name));
  }

  private viewOf(name: ExternalName, r: ExternalRow | undefined): ExternalService {
    return {
      name,
      url: r?.url ?? '',
      enabled: usable(name, r),
      healthy: r?.healthy === null || r?.healthy === undefined ? null : r.healthy === 1,
      last_check: r?.last_check ?? null,
      env_managed: r?.env_managed === 1,
      jwt_secret: r?.jwt_secret ? MASK : '',
      callback_url: r?.callback_url ?? '',
    };
  }

  /** The document server needs a URL and the secret; the diagram editor a URL. */
  enabled(name: ExternalName): boolean {
    return usable(name, this.row(name));
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
  async put(
    name: ExternalName,
    input: { url: string; jwt_secret?: string; callback_url?: string },
  ): Promise<{ before: ExternalService; after: ExternalService }> {
    refuseEnvManaged(this.row(name));
    const url = normaliseUrl(input.url, 'url');
    const callback = input.callback_url === undefined ? undefined : normaliseUrl(input.callback_url, 'callback_url');
    if (name === 'diagram' && input.jwt_secret) throw validation('jwt_secret', 'the diagram editor takes no secret');
    const { before, after } = await this.store(name, (cur) => {
      refuseEnvManaged(cur);
      let secret = cur?.jwt_secret ?? '';
      if (input.jwt_secret !== undefined && input.jwt_secret !== MASK) secret = input.jwt_secret === '' ? '' : encrypt(this.secretKey, input.jwt_secret);
      return {
        url,
        jwt_secret: secret,
        callback_url: name === 'docserver' ? (callback ?? cur?.callback_url ?? '') : '',
        env_managed: 0,
        reset: cur?.url !== url,
      };
    });
    return { before: this.viewOf(name, before), after: this.viewOf(name, after) };
  }

  /**
   * At every start: when SERVICE_DOCSERVER_URL or _JWT is set, the
   * environment's three values replace the stored docserver row, which is
   * then `env_managed`; without them a row the environment used to manage
   * keeps its values and becomes editable (SERVICE_DOCSERVER_CALLBACK_URL
   * alone only sets the callback URL).
   */
  async applyEnvironment(env: ExternalEnv): Promise<void> {
    if (!env.url && !env.jwt_secret) {
      // The callback URL alone leaves the server's address and secret to the admin.
      const callback = env.callback_url ? normaliseUrl(env.callback_url, 'SERVICE_DOCSERVER_CALLBACK_URL') : undefined;
      await this.store('docserver', (cur) =>
        callback !== undefined || cur?.env_managed
          ? { url: cur?.url ?? '', jwt_secret: cur?.jwt_secret ?? '', callback_url: callback ?? cur?.callback_url ?? '', env_managed: 0, reset: false }
          : undefined,
      );
      return;
    }
    const url = normaliseUrl(env.url, 'SERVICE_DOCSERVER_URL');
    const callback = normaliseUrl(env.callback_url, 'SERVICE_DOCSERVER_CALLBACK_URL');
    await this.store('docserver', (cur) => {
      const same = cur && cur.url === url && cur.jwt_secret && decrypt(this.secretKey, cur.jwt_secret) === env.jwt_secret;
      const secret = same ? cur.jwt_secret : env.jwt_secret ? encrypt(this.secretKey, env.jwt_secret) : '';
      return { url, jwt_secret: secret, callback_url: callback, env_managed: 1, reset: cur?.url !== url };
    });
  }

  /** Records a health probe's outcome. */
  async recordCheck(name: ExternalName, healthy: boolean): Promise<void> {
    await this.repo.recordCheck(name, healthy, new Date().toISOString());
    this.rows.set(name, { row: await this.repo.read(name), at: Date.now() });
  }

  /** One change of a row (external-services.repo.ts); the row stored is kept as current at once. */
  private async store(name: ExternalName, decide: (cur: ExternalRow | undefined) => ExternalValues | undefined) {
    const r = await this.repo.change(name, decide);
    this.rows.set(name, { row: r.after, at: Date.now() });
    return r;
  }
}

/** The document server needs a URL and the secret; the diagram editor a URL. */
function usable(name: ExternalName, r: ExternalRow | undefined): boolean {
  if (!r?.url) return false;
  return name === 'diagram' || r.jwt_secret !== '';
}
