/** Recognises a refused foreign key on either database (a row that points at a row deleted meanwhile). */
import { PgStatementError } from './pg/params';

export function isForeignKeyViolation(e: unknown): boolean {
  if (e instanceof PgStatementError) return e.code === '23503';
  return (e as { code?: unknown } | null)?.code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}
