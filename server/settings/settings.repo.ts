/**
 * `settings`: one JSON value per key (the settings module owns the table;
 * `settings.store.ts` holds the defaults, checks and the cache). Synchronous
 * for now: `get` and `set` are called synchronously from a dozen modules
 * (issue 30 continues); reads are cached by the store, so none is on a hot path.
 */
import type { Db } from '../db';

export class SettingsRepo {
  constructor(private db: Db) {}

  /** The stored JSON text of `key`, or undefined when it was never stored. */
  value(key: string): string | undefined {
    return this.db.first(this.db.k.selectFrom('settings').select('value').where('key', '=', key))?.value;
  }

  /** Stores `value` (JSON text) under `key`, replacing what was there. */
  put(key: string, value: string, at: string): void {
    this.db.run(
      this.db.k
        .insertInto('settings')
        .values({ key, value, updated_at: at })
        .onConflict((oc) => oc.column('key').doUpdateSet((eb) => ({ value: eb.ref('excluded.value'), updated_at: eb.ref('excluded.updated_at') }))),
    );
  }

  /** Stores `value` only when `key` was never stored (one conditional statement); whether it did. */
  seed(key: string, value: string, at: string): boolean {
    return (
      this.db.run(
        this.db.k
          .insertInto('settings')
          .values({ key, value, updated_at: at })
          .onConflict((oc) => oc.column('key').doNothing()),
      ) > 0
    );
  }
}
