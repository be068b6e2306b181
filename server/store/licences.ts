/**
 * Licences online (docs/app-store.md, "Licences online"): a paid app's
 * licence fetched from its store by purchase code, and every store's signed
 * revocation list read daily into the licence check's revocations. What a
 * store revoked holds the app (the licence check's `revoked`); a store that
 * cannot be read for 30 days rings the bell once, and never stops an app by
 * itself: the licences keep being verified offline.
 */
import { systemActor, type Actor } from '../auth';
import { DEFAULT_TENANT } from '../db';
import { AppError, isAppError } from '../errors';
import type { EventBus } from '../events';
import type { StoreConnection, StoreConnectionsRepo } from './connections.repo';
import { fetchStoreFile } from './fetch';
import { SIGNATURE_MAX_BYTES, verifySigned } from './format';
import { licenceFile, normaliseCode, parseRevocations, REVOCATIONS_FILE, REVOCATIONS_MAX_BYTES } from './licence-files';
import type { StoreApps } from './service';

/** A store's revocation list unread for this long rings the bell (once, until it is read again). */
export const STALE_MS = 30 * 86_400_000;
/** A licence token is at most 8,192 characters (the app plugins' limit), and a line end. */
const TOKEN_MAX_BYTES = 8200;

export interface StoreLicencesDeps {
  repo: StoreConnectionsRepo;
  apps: StoreApps;
  bus: EventBus;
  timeoutMs: number;
  /** Whether the store is on (`requireOn` of the store). */
  requireOn: () => void;
  now?: () => number;
}

export interface RevocationReport {
  store: number;
  ok: boolean;
  added: number;
  lifted: number;
  error?: string;
  /** Unread for 30 days or more (the bell rang, or rang before). */
  stale: boolean;
}

export class StoreLicences {
  constructor(private d: StoreLicencesDeps) {}

  private now = () => (this.d.now ?? Date.now)();

  /**
   * Fetches the licence the purchase code names from store `store` and sets it for installed app `id`:
   * the licence's status, as when the admin pastes a token. A code the store does not know is
   * `intent_license` (`code_unknown`); the store's other failures are its `store_*` refusals.
   */
  async fetch(by: Actor, id: string, store: number, code: string) {
    this.d.requireOn();
    const c = await this.d.repo.get(store);
    if (!c) throw new AppError('not_found', { path: `store ${store}` });
    if (!(await this.d.apps.installed()).has(id)) throw new AppError('not_found', { path: id });
    if (!/^[0-9A-Z]{8,64}$/.test(normaliseCode(code)))
      throw new AppError('validation_failed', { field: 'code', reason: 'a purchase code: 8 to 64 letters and digits' }, { field: 'code' });
    let token: string;
    try {
      const r = await fetchStoreFile(new URL(licenceFile(code), c.url).href, { timeoutMs: this.d.timeoutMs, maxBytes: TOKEN_MAX_BYTES });
      token = (r as { bytes: Buffer }).bytes.toString('utf8').trim();
    } catch (e) {
      if (isAppError(e) && e.params.reason === 'http_status' && (e.params.status === 404 || e.params.status === 403))
        throw new AppError('intent_license', { id, reason: 'code_unknown' }, { kind: 'app', reason: 'code_unknown', id });
      throw e;
    }
    return this.d.apps.setLicense(by, id, token);
  }

  /** Reads every enabled store's revocation list (daily, and from Admin → Apps → Stores). */
  async refreshAll(): Promise<RevocationReport[]> {
    const out: RevocationReport[] = [];
    for (const c of await this.d.repo.list()) if (c.enabled) out.push(await this.refresh(c));
    return out;
  }

  /**
   * One store's list: a conditional GET, verified against the connection's key, becomes the revocations
   * of source `store:<id>`. No list on the store (404) is an empty one. A failure keeps what was read
   * before and counts towards the 30 days.
   */
  async refresh(c: StoreConnection): Promise<RevocationReport> {
    const base = { store: c.id, added: 0, lifted: 0 };
    try {
      const ids = await this.read(c);
      const r = ids === null ? { added: 0, lifted: 0 } : await this.d.apps.syncRevocations(systemActor('app_store.revocations'), `store:${c.id}`, ids.list);
      await this.d.repo.revocationsRead(c.id, ids?.etag ?? c.revocations_etag, new Date(this.now()).toISOString());
      return { ...base, ...r, ok: true, stale: false };
    } catch (e) {
      const error = isAppError(e) ? `${e.code}: ${e.params.reason ?? ''}` : String(e);
      const since = Date.parse(c.revocations_at ?? c.added_at);
      const stale = this.now() - since >= STALE_MS;
      if (stale && !c.revocations_warned_at && (await this.d.repo.claimRevocationsWarning(c.id, new Date(this.now()).toISOString())))
        await this.d.bus.emit(DEFAULT_TENANT, 'app_store.licences_unchecked', { store: c.id, url: c.url, name: c.name, since: c.revocations_at, error });
      return { ...base, ok: false, error, stale };
    }
  }

  /** The list's ids and ETag; null when unchanged since the last read (304). */
  private async read(c: StoreConnection): Promise<{ list: string[]; etag: string | null } | null> {
    const o = { timeoutMs: this.d.timeoutMs };
    let r: Awaited<ReturnType<typeof fetchStoreFile>>;
    try {
      r = await fetchStoreFile(new URL(REVOCATIONS_FILE, c.url).href, { ...o, maxBytes: REVOCATIONS_MAX_BYTES, etag: c.revocations_etag });
    } catch (e) {
      if (isAppError(e) && e.params.reason === 'http_status' && e.params.status === 404) return { list: [], etag: null };
      throw e;
    }
    if (r.not_modified) return null;
    const sig = await fetchStoreFile(new URL(`${REVOCATIONS_FILE}.sig`, c.url).href, { ...o, maxBytes: SIGNATURE_MAX_BYTES });
    if (sig.not_modified) throw new AppError('store_unreachable', { reason: 'http_status', status: 304 });
    verifySigned(r.bytes, sig.bytes, c.public_key_pem, REVOCATIONS_FILE);
    return { list: parseRevocations(r.bytes).revoked.map((x) => x.id), etag: r.etag };
  }
}
