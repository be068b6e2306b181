/**
 * Request validation at the edge: a zod schema per route; the first issue
 * becomes `validation_failed` with `details.field` (dotted path).
 */
import { z } from 'zod';
import { AppError } from '../errors';
import { isLang } from '../lib/i18n';

export function validate<T extends z.ZodType>(schema: T, input: unknown): z.infer<T> {
  const r = schema.safeParse(input ?? {});
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const field = issue.path.length ? issue.path.join('.') : ((issue as { keys?: string[] }).keys?.[0] ?? 'body');
  throw new AppError('validation_failed', { field, reason: issue.message }, { field, reason: issue.message });
}

/** Query-string helpers: values arrive as strings (or arrays when repeated). */
export const q = {
  int: (min = 0, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max),
  str: (max = 4096) => z.string().max(max),
  bool: () => z.enum(['1', '0', 'true', 'false']).transform((v) => v === '1' || v === 'true'),
};

/** An account's language: a built-in one or an installed language pack's id, read when the request comes. */
export const languageId = () => z.string().max(35).refine(isLang, 'not an available language');
export { z };
