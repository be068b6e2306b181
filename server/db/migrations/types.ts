/** A timestamped schema step, applied once, inside a transaction, in name order. */
export interface Migration {
  /** `<yyyymmddHHMMSS>-<name>`; the timestamp orders migrations. */
  name: string;
  sql: string;
}
