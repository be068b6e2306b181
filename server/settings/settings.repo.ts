/**
 * `settings`: one JSON value per key (the settings module owns the table;
 * `settings.store.ts` holds the defaults, checks and the in-memory copy that
 * `get` answers from). Every statement is asynchronous (`db.async`).
 */
import type { Db } from '../db';

export class SettingsRepo {
  constructor(private db: Db) {}

  /** Every stored key with its JSON text (read once at start). */
  all(): Promise<Array<{ key: string; value: string }>> {
    return this.db.async.all(this.db.k.selectFrom('settings').select(['key', 'value']));
  }

  /** The stored JSON text of `key`, or undefined when it was never stored. */
  async value(key: string): Promise<string | undefined> {
    return (await this.db.async.first(this.db.k.selectFrom('settings').select('value').where('key', '=', key)))?.value;
  }

  /** Stores `value` (JSON text) under `key`, replacing what was there. */
  async put(key: string, value: string, at: string): Promise<void> {
    await this.db.async.run(
      this.db.k
        .insertInto('settings')
        .values({ key, value, updated_at: at })
        .onConflict((oc) => oc.column('key').doUpdateSet((eb) => ({ value: eb.ref('excluded.value'), updated_at: eb.ref('excluded.updated_at') }))),
    );
  }

  /**
   * Reads `key`'s JSON text, lets `decide` choose the new text (it may throw to refuse) and stores it, as one
   * serializable unit: two changes of one value (a list, an object) never both start from the same old one.
   * `decide` may run again when PostgreSQL retries the unit. Returns the text before and after.
   */
  change(key: string, decide: (cur: string | undefined) => string, at: string): Promise<{ before?: string; after: string }> {
    const { k } = this.db;
    return this.db.async.unit(
      function* (t) {
        const before = (yield* t.first(k.selectFrom('settings').select('value').where('key', '=', key)))?.value;
        const after = decide(before);
        yield* t.run(
          k
            .insertInto('settings')
            .values({ key, value: after, updated_at: at })
            .onConflict((oc) => oc.column('key').doUpdateSet({ value: after, updated_at: at })),
        );
        return { before, after };
      },
      { isolation: 'serializable' },
    );
  }

  /** Stores `value` only when `key` was never stored (one conditional statement); whether it did. */
  async seed(key: string, value: string, at: string): Promise<boolean> {
    return (
      (await this.db.async.run(
        this.db.k
          .insertInto('settings')
          .values({ key, value, updated_at: at })
          .onConflict((oc) => oc.column('key').doNothing()),
      )) > 0
    );
  }
}
