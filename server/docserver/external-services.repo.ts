/**
 * `external_services`: one row per external service (the docserver module owns
 * the table; `external.service.ts` holds the rules and keeps rows in memory).
 * A change is one serializable unit: the stored row is read, the service's
 * rule decides the new values from it, and they are written, so two admins
 * (or an admin and another instance's start) never write from a stale row.
 */
import type { Db } from '../db';
import type { ExternalServicesTable } from '../db/tables';

export type ExternalRow = ExternalServicesTable;

/** What a change stores; `reset` forgets the last health check (the address changed). */
export interface ExternalValues {
  url: string;
  jwt_secret: string;
  callback_url: string;
  env_managed: number;
  reset: boolean;
}

export class ExternalServicesRepo {
  constructor(private db: Db) {}

  private query(name: string) {
    return this.db.k.selectFrom('external_services').selectAll().where('name', '=', name);
  }

  /** The service's row, or undefined. */
  read(name: string): Promise<ExternalRow | undefined> {
    return this.db.async.first(this.query(name));
  }

  /**
   * Reads the stored row, lets `decide` choose what to store (undefined: nothing; it may throw to refuse),
   * writes it, all in one unit. Returns the row before and the row stored.
   */
  change(name: string, decide: (cur: ExternalRow | undefined) => ExternalValues | undefined): Promise<{ before?: ExternalRow; after?: ExternalRow }> {
    const { k } = this.db;
    const read = this.query(name);
    return this.db.async.unit(
      function* (t) {
        const before = yield* t.first(read);
        const v = decide(before);
        if (!v) return { before, after: before };
        const now = new Date().toISOString();
        const health = v.reset ? { healthy: null, last_check: null } : {};
        const set = { url: v.url, jwt_secret: v.jwt_secret, callback_url: v.callback_url, env_managed: v.env_managed, updated_at: now };
        yield* t.run(
          k
            .insertInto('external_services')
            .values({ name, ...set, healthy: null, last_check: null })
            .onConflict((oc) => oc.column('name').doUpdateSet({ ...set, ...health })),
        );
        return { before, after: yield* t.first(read) };
      },
      { isolation: 'serializable' },
    );
  }

  /** Records a health probe's outcome (nothing when the service has no row). */
  async recordCheck(name: string, healthy: boolean, at: string): Promise<void> {
    await this.db.async.run(
      this.db.k
        .updateTable('external_services')
        .set({ healthy: healthy ? 1 : 0, last_check: at })
        .where('name', '=', name),
    );
  }
}
