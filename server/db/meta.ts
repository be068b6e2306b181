/**
 * One-time instance facts in `meta` (owner: db): first-boot seeding done, the
 * desktop bootstrap secret consumed, ... Modules ask and record through this
 * store; none writes the table itself. A value once seen is kept in memory:
 * facts are recorded once, and `get` sits on request paths (`/api/auth/me`
 * asks for the default storage), where a statement per request cost a round
 * trip to a PostgreSQL server each time.
 */
import type { Db } from './index';

export class MetaStore {
  private known = new Map<string, string>();

  constructor(private db: Pick<Db, 'k' | 'first' | 'run'>) {}

  /** The value recorded under `key`, or undefined (asked again next time: another instance may record it). */
  get(key: string): string | undefined {
    const hit = this.known.get(key);
    if (hit !== undefined) return hit;
    const value = this.db.first(this.db.k.selectFrom('meta').select('value').where('key', '=', key))?.value;
    if (value !== undefined) this.known.set(key, value);
    return value;
  }

  /** Records `value` under `key` unless a value is there already (another instance may race); returns the value kept. */
  setIfAbsent(key: string, value: string): string {
    this.db.run(this.db.k.insertInto('meta').values({ key, value }).onConflict((oc) => oc.column('key').doNothing()));
    return this.get(key) ?? value;
  }

  /** Records `value` under `key`, replacing an earlier one. */
  set(key: string, value: string): void {
    this.db.run(this.db.k.insertInto('meta').values({ key, value }).onConflict((oc) => oc.column('key').doUpdateSet({ value })));
    this.known.set(key, value);
  }
}
