/**
 * Store connections (migration 20261206130000-app-store-connections): the
 * only writer of `app_store_connections`. Asynchronous on `db.async`.
 */
import type { Db } from '../db';

export interface StoreConnection {
  id: number;
  url: string;
  public_key_pem: string;
  fingerprint: string;
  name: string | null;
  enabled: boolean;
  etag: string | null;
  refreshed_at: string | null;
  last_error: string | null;
  added_at: string;
  /** The store's revocation list (licences.ts): its ETag, when it was last read, when the 30-day warning rang. */
  revocations_etag: string | null;
  revocations_at: string | null;
  revocations_warned_at: string | null;
}

const COLUMNS = [
  'id',
  'url',
  'public_key_pem',
  'fingerprint',
  'name',
  'enabled',
  'etag',
  'refreshed_at',
  'last_error',
  'added_at',
  'revocations_etag',
  'revocations_at',
  'revocations_warned_at',
] as const;
const row = (r: Omit<StoreConnection, 'enabled'> & { enabled: number | boolean }): StoreConnection => ({ ...r, enabled: !!r.enabled });

export class StoreConnectionsRepo {
  constructor(private db: Db) {}

  async list(): Promise<StoreConnection[]> {
    return (await this.db.async.all(this.db.k.selectFrom('app_store_connections').select(COLUMNS).orderBy('id'))).map(row);
  }

  async get(id: number): Promise<StoreConnection | null> {
    const r = await this.db.async.first(this.db.k.selectFrom('app_store_connections').select(COLUMNS).where('id', '=', id));
    return r ? row(r) : null;
  }

  /** Null when a connection with this URL exists. */
  async add(c: { url: string; public_key_pem: string; fingerprint: string }, by: number | null): Promise<number | null> {
    const r = await this.db.async.first(
      this.db.k
        .insertInto('app_store_connections')
        .values({ ...c, enabled: 1, added_by: by, added_at: new Date().toISOString() })
        .onConflict((oc) => oc.column('url').doNothing())
        .returning('id'),
    );
    return r?.id ?? null;
  }

  async setEnabled(id: number, enabled: boolean): Promise<boolean> {
    return (
      (await this.db.async.run(
        this.db.k
          .updateTable('app_store_connections')
          .set({ enabled: enabled ? 1 : 0 })
          .where('id', '=', id),
      )) > 0
    );
  }

  /** Records a refresh: a good one names the store and its ETag and clears the error; a failed one keeps them. */
  async refreshed(id: number, outcome: { name: string; etag: string | null } | { error: string }): Promise<void> {
    const at = new Date().toISOString();
    const set = 'error' in outcome ? { last_error: outcome.error.slice(0, 500), refreshed_at: at } : { ...outcome, last_error: null, refreshed_at: at };
    await this.db.async.run(this.db.k.updateTable('app_store_connections').set(set).where('id', '=', id));
  }

  /** The revocation list was read (or had not changed): its ETag and when; a later 30 days unread may warn again. */
  async revocationsRead(id: number, etag: string | null, at: string): Promise<void> {
    await this.db.async.run(
      this.db.k.updateTable('app_store_connections').set({ revocations_etag: etag, revocations_at: at, revocations_warned_at: null }).where('id', '=', id),
    );
  }

  /** Takes the 30-day warning for this unread stretch: true for one caller (of several instances). */
  async claimRevocationsWarning(id: number, at: string): Promise<boolean> {
    const q = this.db.k.updateTable('app_store_connections').set({ revocations_warned_at: at }).where('id', '=', id).where('revocations_warned_at', 'is', null);
    return (await this.db.async.run(q)) > 0;
  }

  async remove(id: number): Promise<boolean> {
    return (await this.db.async.run(this.db.k.deleteFrom('app_store_connections').where('id', '=', id))) > 0;
  }
}
