/**
 * Values as better-sqlite3 gives them, for every PostgreSQL connection the
 * runtime reads through (the pool): int8 and
 * numeric (sum() of bigints) as numbers (ids, sizes and ms times are below
 * 2^53), booleans as 1/0.
 */
import pg from 'pg';

export const sqliteLikeTypes = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8 || oid === pg.types.builtins.NUMERIC
      ? (v: string) => Number(v)
      : oid === pg.types.builtins.BOOL
        ? (v: string) => (v === 't' ? 1 : 0)
        : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};
