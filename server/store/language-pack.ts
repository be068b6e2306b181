/**
 * The language-pack format (docs/app-store.md, "Language packs"): one JSON
 * file in a store, `<id>-<version>.json`, verified as app packages are (the
 * signed index gives its size and sha256). It carries the strings of the web
 * UI, the error sentences and the public pages and e-mails of one language.
 * A key the pack lacks falls back to English; a key whose `{placeholders}`
 * differ from English's is refused, so no sentence loses a value or shows a
 * stray mark.
 */
import { z } from 'zod';
import { en as uiEn } from '../../renderer/src/i18n/en';
import { en as errorsEn } from '../lib/i18n/catalogue';
import type { PackStrings } from '../lib/i18n';
import { publicEn } from '../shares/public-i18n';
import { storeError } from './format';

export const PACK_FORMAT = 'filedock-language-pack/1';
/** A pack file's name in a store. */
export const packFile = (id: string, version: string) => `${id}-${version}.json`;

const strings = z.record(z.string().max(200), z.string().max(4000));
const pack = z.strictObject({
  format: z.literal(PACK_FORMAT),
  /** A BCP 47 base language (`de`, `fr`, `pt-BR`): the id of the language in menus and on accounts. */
  id: z.string().regex(/^[a-z]{2,3}(-[A-Z]{2})?$/),
  /** The language's own name (`Deutsch`). */
  name: z.string().min(1).max(60),
  version: z.string().regex(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/),
  filedock_range: z.string().max(256),
  publisher: z.string().max(63),
  description: z.string().max(4000).optional(),
  strings: z.strictObject({
    ui: strings,
    errors: z.record(z.string().max(200), z.union([z.string().max(4000), z.array(z.string().max(4000)).min(1).max(10)])),
    public: strings,
  }),
});
type LanguagePack = z.infer<typeof pack>;

/** The English catalogues a pack translates, by part. */
const ENGLISH: { [P in keyof PackStrings]: Record<string, string | readonly string[]> } = { ui: uiEn, errors: errorsEn, public: publicEn };

/** The `{marks}` of a sentence, sorted and without repeats. */
const marks = (s: string): string[] => [...new Set([...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]))].sort();

/** The reference of `key` in English: the key itself, or for `<key>.one` the key's other form. */
const reference = (part: Record<string, string | readonly string[]>, key: string) => part[key] ?? (key.endsWith('.one') ? part[key.slice(0, -4)] : undefined);

interface PackProblem {
  part: keyof PackStrings;
  key: string;
  reason: 'placeholder_mismatch' | 'unknown_key' | 'forms_mismatch';
  expected?: string[];
  got?: string[];
}

/**
 * Every key of the pack against English: known (a `.one` form needs its key in English), the same number of
 * forms for an error with several, and the same set of `{marks}` in each form. Returns the problems found.
 */
export function comparePack(p: PackStrings): PackProblem[] {
  const out: PackProblem[] = [];
  for (const part of ['ui', 'errors', 'public'] as const)
    for (const [key, value] of Object.entries(p[part])) {
      const ref = reference(ENGLISH[part], key);
      if (ref === undefined) {
        out.push({ part, key, reason: 'unknown_key' });
        continue;
      }
      const refForms = typeof ref === 'string' ? [ref] : ref;
      const forms = typeof value === 'string' ? [value] : value;
      if (refForms.length !== forms.length) {
        out.push({ part, key, reason: 'forms_mismatch' });
        continue;
      }
      refForms.forEach((r, i) => {
        const [expected, got] = [marks(r), marks(forms[i])];
        if (expected.join() !== got.join()) out.push({ part, key, reason: 'placeholder_mismatch', expected, got });
      });
    }
  return out;
}

/** The keys of English a pack does not translate (they show in English). */
export function missingKeys(p: PackStrings): Array<{ part: keyof PackStrings; key: string }> {
  return (['ui', 'errors', 'public'] as const).flatMap((part) =>
    Object.keys(ENGLISH[part])
      .filter((k) => !(k in p[part]))
      .map((key) => ({ part, key })),
  );
}

/** The share of English's keys `p` translates, in whole percent (rounded down: 100 only when nothing is missing). */
export function completeness(p: PackStrings): number {
  const total = (['ui', 'errors', 'public'] as const).reduce((n, part) => n + Object.keys(ENGLISH[part]).length, 0);
  return Math.floor((100 * (total - missingKeys(p).length)) / total);
}

const refuse = (reason: string, extra: Record<string, string | number> = {}) => storeError('store_invalid', reason, extra, 'language-pack');

/**
 * Reads a downloaded pack: JSON of this format, plural rules known to Intl for its language, every key
 * English has checked against it (keys it lacks are kept and never asked for). Refusals are `store_invalid` with `details.kind: 'language-pack'`.
 */
export function readPack(bytes: Buffer): LanguagePack {
  let raw: unknown;
  try {
    raw = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw refuse('bad_pack', { detail: 'not JSON' });
  }
  const r = pack.safeParse(raw);
  if (!r.success) {
    const first = r.error.issues[0];
    throw refuse('bad_pack', { detail: `${first.path.join('.') || 'pack'}: ${first.message}` });
  }
  // Plural forms come from Intl.PluralRules: a language it does not know would count in English.
  if (Intl.PluralRules.supportedLocalesOf([r.data.id]).length === 0) throw refuse('plural_rules_unknown', { id: r.data.id });
  // A key English no longer has is harmless (never asked for); one that would show wrong values is not.
  const problem = comparePack(r.data.strings).find((x) => x.reason !== 'unknown_key');
  if (problem)
    throw refuse(problem.reason, {
      key: `${problem.part}.${problem.key}`,
      ...(problem.expected && { expected: problem.expected.join(', '), got: problem.got!.join(', ') }),
    });
  return r.data;
}
