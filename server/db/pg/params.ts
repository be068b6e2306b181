/** Statement text and errors as the pool (pool.ts) hands them between the repositories and PostgreSQL. */

/** A statement PostgreSQL refused; `code` is its SQLSTATE (23505 unique violation, 57014 cancelled...). */
export class PgStatementError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
    readonly constraint: string | undefined,
  ) {
    super(message);
  }
}

const positional = new Map<string, string>();

/** `?` placeholders (outside quotes and comments) as PostgreSQL's `$1, $2, ...`; cached per SQL text. */
export function toPositional(sql: string): string {
  let out = positional.get(sql);
  if (out !== undefined) return out;
  let n = 0;
  out = sql.replace(/'(?:[^']|'')*'|"(?:[^"]|"")*"|--[^\n]*|\?/g, (m) => (m === '?' ? `$${++n}` : m));
  if (positional.size >= 500) positional.clear();
  positional.set(sql, out);
  return out;
}

/** `@name` parameters as `?` with the names in order (better-sqlite3's named binding, as the repositories write it). */
export function namedToPositional(sql: string): { sql: string; names: string[] } | null {
  const names: string[] = [];
  const out = sql.replace(/'(?:[^']|'')*'|"(?:[^"]|"")*"|@([A-Za-z_]\w*)/g, (m, name: string | undefined) => {
    if (!name) return m;
    names.push(name);
    return '?';
  });
  return names.length ? { sql: out, names } : null;
}
