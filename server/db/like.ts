/** `s` matched literally by `LIKE … ESCAPE '\'` (its `\`, `%` and `_` escaped), the same on SQLite and PostgreSQL. */
export const escapeLike = (s: string): string => s.replace(/[\\%_]/g, (c) => '\\' + c);
