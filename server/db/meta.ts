/**
 * One-time instance facts in `meta` (owner: db): first-boot seeding done, the
 * desktop bootstrap secret consumed, ... Modules ask and record through this
 * store; none writes the table itself.
 */
import type { Db } from './index';

export class MetaStore {
  private known = new Map<string, string>();

  constructor(private db: Pick<Db, 'k' | 'async'>) {}

  /** The value recorded under `key`, or undefined. */
  async get(key: string): Promise<string | undefined> {
    return (await this.db.async.first(this.db.k.selectFrom('meta').select('value').where('key', '=', key)))?.value;
  }

  /**
   * `get` for a fact recorded once and never changed (the default storage): kept in memory once seen, for
   * request paths (`/api/auth/me` asks for it), where a statement per request cost a round trip to a
   * PostgreSQL server each time. Not yet recorded: asked again next time (another instance may record it).
   */
  async fact(key: string): Promise<string | undefined> {
    const hit = this.known.get(key);
    if (hit !== undefined) return hit;
    const value = await this.get(key);
    if (value !== undefined) this.known.set(key, value);
    return value;
  }

  /** Records `value` under `key` unless a value is there already (another instance may race); returns the value kept. */
  async setIfAbsent(key: string, value: string): Promise<string> {
    const { k } = this.db;
    return this.db.async.unit(function* (t) {
      yield* t.run(
        k
          .insertInto('meta')
          .values({ key, value })
          .onConflict((oc) => oc.column('key').doNothing()),
      );
      return (yield* t.first(k.selectFrom('meta').select('value').where('key', '=', key)))?.value ?? value;
    });
  }

  /**
   * Records `value` under `key` unless it is there already; whether this call changed it. One conditional
   * statement, so of callers claiming one value at once exactly one gets true (a one-time secret's use).
   */
  async claim(key: string, value: string): Promise<boolean> {
    const changed = await this.db.async.run(
      this.db.k
        .insertInto('meta')
        .values({ key, value })
        .onConflict((oc) => oc.column('key').doUpdateSet({ value }).where('meta.value', '<>', value)),
    );
    return changed > 0;
  }

  /** Records `value` under `key`, replacing an earlier one. */
  async set(key: string, value: string): Promise<void> {
    await this.db.async.run(
      this.db.k
        .insertInto('meta')
        .values({ key, value })
        .onConflict((oc) => oc.column('key').doUpdateSet({ value })),
    );
  }
}
