/** A timestamped schema step, applied once, inside a transaction, in name order. */
export interface Migration {
  /** `<yyyymmddHHMMSS>-<name>`; the timestamp orders migrations. */
  name: string;
  /** The SQLite script. */
  sql: string;
  /**
   * The PostgreSQL script. Missing means the migration was not ported: a
   * PostgreSQL database refuses to migrate past it and the dialect test names
   * it (write new migrations with `portable()`, migrations/kit.ts).
   */
  postgres?: string;
  /**
   * SQLite: applied with foreign keys off (a table rebuild: create the new table, copy, drop, rename),
   * then `foreign_key_check` must find nothing before it commits.
   */
  foreignKeysOff?: boolean;
}
