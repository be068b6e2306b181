/** The URL is wrong, or the database cannot be reached or entered (the CLI exits 2). Its own module: the CLI's
 * error handler needs the class without loading the PostgreSQL driver. */
export class DatabaseUrlError extends Error {}
