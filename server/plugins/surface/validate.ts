/**
 * Checks the values a person submits against the form fields of the surface
 * they were shown (SPEC Errors: `invalid`, `required`, 422 with `fields`).
 * A field hidden by its `show_when` is neither required nor checked;
 * `required_when` makes a field required when another field's value is one of
 * `equals`.
 */
import { AppError } from '../../errors';

type Field = Record<string, unknown>;
type Condition = { key: string; equals: string[] } | undefined;

const holds = (c: Condition, data: Record<string, unknown>) => !!c && c.equals.includes(String(data[c.key] ?? ''));
const empty = (v: unknown) => v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0);

/** Why `v` does not fit `f`, or null. */
function problem(f: Field, v: unknown): string | null {
  const t = f.type;
  if (t === 'bool') return typeof v === 'boolean' ? null : 'must be true or false';
  if (t === 'int') {
    if (!Number.isInteger(v)) return 'must be a whole number';
    if (typeof f.min === 'number' && (v as number) < f.min) return `must be at least ${f.min}`;
    if (typeof f.max === 'number' && (v as number) > f.max) return `must be at most ${f.max}`;
    return null;
  }
  if (typeof v !== 'string') return 'must be text';
  if (typeof f.max_length === 'number' && v.length > f.max_length) return `at most ${f.max_length} characters`;
  if (t === 'select' && !(f.options as Array<{ value: string }> | undefined)?.some((o) => o.value === v)) return 'not one of the choices';
  if (t === 'date' && !/^\d{4}-\d{2}-\d{2}$/.test(v)) return 'must be a date (YYYY-MM-DD)';
  return null;
}

/** Throws 422 `required` (something missing) or `invalid` (something that does not fit), naming every field. */
export function checkSubmission(fields: Map<string, Field>, data: Record<string, unknown>): void {
  const required: string[] = [];
  const invalid: string[] = [];
  const reasons: Record<string, string> = {};
  for (const [key, f] of fields) {
    if (f.show_when && !holds(f.show_when as Condition, data)) continue;
    const v = data[key];
    if (empty(v)) {
      if (f.required || holds(f.required_when as Condition, data)) {
        required.push(key);
        reasons[key] = 'required';
      }
      continue;
    }
    const p = problem(f, v);
    if (p) {
      invalid.push(key);
      reasons[key] = p;
    }
  }
  if (!required.length && !invalid.length) return;
  const fieldsOut = [...required, ...invalid];
  const code = required.length ? 'required' : 'invalid';
  throw new AppError(code, { fields: fieldsOut.join(', ') }, { fields: fieldsOut, invalid, required, reasons });
}
