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
}
