/**
 * The storage form is generated from a driver descriptor. These pure helpers
 * turn a stored config into form values and back, typing each field by its
 * descriptor (int, bool, ...), reading legacy aliases, and reporting the
 * required fields that are still empty.
 */
import type { DriverDescriptor, DriverField } from '../api/types';

export type FormValues = Record<string, string | boolean>;

/** Form values for `config` (or the descriptor's defaults for a new storage). */
export function initialValues(d: DriverDescriptor, config: Record<string, unknown> = {}): FormValues {
  const out: FormValues = {};
  for (const f of d.fields) {
    const raw = [f.key, ...(f.aliases ?? [])].map((k) => config[k]).find((v) => v !== undefined && v !== null) ?? f.default;
    out[f.key] = f.type === 'bool' ? raw === true || raw === 'true' : raw === undefined || raw === null ? '' : String(raw);
  }
  return out;
}

/** The config object to send: typed values, empty optional fields left out. */
export function toConfig(d: DriverDescriptor, v: FormValues): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of d.fields) {
    const val = v[f.key];
    if (f.type === 'bool') {
      out[f.key] = val === true;
      continue;
    }
    const s = typeof val === 'string' ? val.trim() : '';
    if (s === '') continue;
    out[f.key] = f.type === 'int' ? Number(s) : s;
  }
  return out;
}

/** Keys of required fields with no value (a secret reading `***` counts as kept). */
export function missingRequired(d: DriverDescriptor, v: FormValues): string[] {
  return d.fields.filter((f: DriverField) => f.required && f.type !== 'bool' && String(v[f.key] ?? '').trim() === '').map((f) => f.key);
}

/** The choices of a `select` field, whichever shape the descriptor uses. */
export function optionsOf(f: DriverField): { value: string; label: string }[] {
  return (f.options ?? []).map((o) => (typeof o === 'string' ? { value: o, label: o } : { value: o.value, label: o.label ?? o.value }));
}
