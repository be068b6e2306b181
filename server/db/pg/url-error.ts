/** The URL is wrong, or the database cannot be reached or entered (the CLI exits 2). Its own module: the CLI's
 * error handler and the SQLite path need it without loading the PostgreSQL driver. */
export class DatabaseUrlError extends Error {}

/** The URL with its password masked, for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparsable URL)';
  }
}
