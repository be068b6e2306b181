/**
 * The pure side of a surface: which nodes the UI draws, when a field shows and
 * when it is required (`show_when`, `required_when`), the first values, the
 * values a submit sends, the client's hints, and the server's refusals by field.
 * The server judges every submit (server/plugins/surface/validate.ts); the same
 * rules here only let the form show the person what it will ask for.
 */
import type { Condition, FieldErrors, FormField, SurfaceData, SurfaceNode, Value, Values } from './types';

export const NODE_TYPES = new Set([
  'text',
  'form',
  'steps',
  'list',
  'progress',
  'people-picker',
  'pin-input',
  'file-chooser',
  'pdf-fields',
  'signature-pad',
  'preview',
  'divider',
  'row',
]);
const FIELD_TYPES = new Set(['string', 'password', 'int', 'bool', 'select', 'text', 'date']);

/** The nodes the UI knows how to draw (unknown types dropped, also inside rows; fields of unknown types dropped). */
export function knownNodes(nodes: unknown): SurfaceNode[] {
  if (!Array.isArray(nodes)) return [];
  const out: SurfaceNode[] = [];
  for (const n of nodes) {
    const type = (n as { type?: unknown } | null)?.type;
    if (typeof type !== 'string' || !NODE_TYPES.has(type)) continue;
    if (type === 'row') out.push({ ...(n as object), type: 'row', children: knownNodes((n as { children?: unknown }).children) } as SurfaceNode);
    else if (type === 'form')
      out.push({
        ...(n as object),
        type: 'form',
        fields: (Array.isArray((n as { fields?: unknown }).fields) ? (n as { fields: FormField[] }).fields : []).filter(
          (f) => f && FIELD_TYPES.has(f.type) && typeof f.key === 'string',
        ),
      } as SurfaceNode);
    else out.push(n as SurfaceNode);
  }
  return out;
}

const isEmpty = (v: Value) => v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0);

/** A condition holds when the other field's value, as text, is one of `equals` (an unset value is ''), as the server reads it. */
export function holds(c: Condition | undefined, values: Values): boolean {
  if (!c) return false;
  const v = values[c.key];
  return c.equals.includes(v === undefined || v === null ? '' : String(v));
}

/** Shown unless a `show_when` does not hold. */
export const isShown = (f: FormField, values: Values): boolean => !f.show_when || holds(f.show_when, values);

/** Required when it says so, or when its `required_when` holds; a hidden field never is. */
export const isRequired = (f: FormField, values: Values): boolean => isShown(f, values) && (!!f.required || holds(f.required_when, values));

/** An input of the surface: a form field, or a node that collects a value under its `key`. */
export interface Input {
  key: string;
  node: SurfaceNode;
  field?: FormField;
}

/** Every input of the surface, rows walked, in order. */
export function inputs(nodes: SurfaceNode[]): Input[] {
  const out: Input[] = [];
  const walk = (list: SurfaceNode[]) => {
    for (const n of list) {
      if (n.type === 'row') walk(n.children);
      else if (n.type === 'form') for (const f of n.fields) out.push({ key: f.key, node: n, field: f });
      else if ('key' in n && typeof n.key === 'string') out.push({ key: n.key, node: n });
    }
  };
  walk(nodes);
  return out;
}

/** The values a new surface starts with: each field's `default` (a flag starts false; a select with no default starts unchosen). */
export function initialValues(surface: SurfaceData): Values {
  const v: Values = {};
  for (const i of inputs(knownNodes(surface.nodes))) {
    if (!i.field) continue;
    const d = i.field.default;
    if (i.field.type === 'bool') v[i.key] = d === true || d === 'true';
    else if (d !== undefined) v[i.key] = i.field.type === 'int' ? d : String(d);
  }
  return v;
}

/**
 * What a submit sends: the values of shown inputs only, empty ones left out,
 * whole numbers as numbers (text that is not one goes as typed, for the server to refuse).
 */
export function collectValues(surface: SurfaceData, values: Values): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const i of inputs(knownNodes(surface.nodes))) {
    const v = values[i.key];
    if (i.field && !isShown(i.field, values)) continue;
    if (isEmpty(v)) continue;
    if (i.field?.type === 'int' && typeof v === 'string') {
      const n = Number(v.trim());
      out[i.key] = v.trim() !== '' && Number.isInteger(n) ? n : v;
    } else out[i.key] = v;
  }
  return out;
}

export type Hint = { code: 'required' } | { code: 'min' | 'max' | 'max_length'; n: number } | { code: 'int' };

/** The client's hints (shown beside fields; the submit still goes to the server, which decides). */
export function hints(surface: SurfaceData, values: Values): Record<string, Hint> {
  const out: Record<string, Hint> = {};
  for (const i of inputs(knownNodes(surface.nodes))) {
    const v = values[i.key];
    const f = i.field;
    if (f && !isShown(f, values)) continue;
    const required = f ? isRequired(f, values) : !!(i.node as { required?: boolean }).required;
    if (isEmpty(v)) {
      if (required) out[i.key] = { code: 'required' };
      continue;
    }
    if (!f) continue;
    if (f.type === 'int') {
      const n = typeof v === 'number' ? v : Number(String(v).trim());
      if (!Number.isInteger(n)) out[i.key] = { code: 'int' };
      else if (typeof f.min === 'number' && n < f.min) out[i.key] = { code: 'min', n: f.min };
      else if (typeof f.max === 'number' && n > f.max) out[i.key] = { code: 'max', n: f.max };
    } else if (typeof v === 'string' && typeof f.max_length === 'number' && v.length > f.max_length) out[i.key] = { code: 'max_length', n: f.max_length };
  }
  return out;
}

/**
 * The server's 422 (`required`/`invalid`) as per-field reasons: `details.reasons`
 * when sent, else each of `details.fields` with the error code. Empty for any other failure.
 */
export function fieldErrorsOf(e: { status?: number; code?: string; details?: Record<string, unknown> } | null | undefined): FieldErrors {
  if (!e || e.status !== 422 || (e.code !== 'required' && e.code !== 'invalid')) return {};
  const out: FieldErrors = {};
  const reasons = e.details?.reasons;
  if (reasons && typeof reasons === 'object')
    for (const [k, r] of Object.entries(reasons as Record<string, unknown>)) out[k] = typeof r === 'string' ? r : e.code;
  const fields = e.details?.fields;
  if (Array.isArray(fields)) for (const k of fields) if (typeof k === 'string' && !out[k]) out[k] = e.code;
  return out;
}

/** A label in the reader's language: the language, then English, then any. */
export function pickLabel(label: Record<string, string> | string | null | undefined, lang: string): string {
  if (!label) return '';
  if (typeof label === 'string') return label;
  return label[lang] ?? label.en ?? Object.values(label)[0] ?? '';
}
