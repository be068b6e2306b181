import { catalogues, LANGS, type Catalogue, type Lang } from './catalogue';
import { languagePacks } from './packs';
export { LANGS, type Lang } from './catalogue';
export { languagePacks, type PackStrings } from './packs';

const builtIn = (v: string): v is (typeof LANGS)[number] => (LANGS as readonly string[]).includes(v);

/** A built-in language or an installed language pack's id. */
export const isLang = (v: unknown): v is Lang => typeof v === 'string' && (builtIn(v) || languagePacks.get(v) !== undefined);

/** The error sentences of `lang`: built in, or an installed pack's (empty when neither, so English answers). */
const errorsOf = (lang: Lang): Catalogue => (builtIn(lang) ? catalogues[lang] : (languagePacks.get(lang)?.strings.errors ?? {}));

/** Fills `{name}` marks; unknown marks stay visible so a missing param is noticed. */
export function format(template: string, params: Record<string, unknown> = {}): string {
  return template.replace(/\{(\w+)\}/g, (m, k: string) => (params[k] === undefined || params[k] === null ? m : String(params[k])));
}

/**
 * The sentence for `key` in `lang`, falling back to English, then to the key
 * itself. Of a key's several forms, the first whose marks `params` all fill.
 */
export function t(lang: Lang, key: string, params: Record<string, unknown> = {}): string {
  const forms = errorsOf(lang)[key] ?? catalogues.en[key] ?? key;
  if (typeof forms === 'string') return format(forms, params);
  const filled = (f: string) => [...f.matchAll(/\{(\w+)\}/g)].every((m) => params[m[1]] !== undefined && params[m[1]] !== null);
  return format(forms.find(filled) ?? forms[forms.length - 1], params);
}

/**
 * Picks a language from, in order: an explicit choice (account or `lang` query),
 * the Accept-Language header (q-weighted), then the instance default.
 */
export function pickLang(explicit: Array<string | null | undefined>, acceptLanguage: string | undefined, fallback: Lang): Lang {
  for (const e of explicit) if (e && isLang(e.toLowerCase())) return e.toLowerCase() as Lang;
  if (acceptLanguage) {
    const ranked = acceptLanguage
      .split(',')
      .map((part, i) => {
        const [tag, ...rest] = part.trim().split(';');
        const q = rest.map((r) => r.trim()).find((r) => r.startsWith('q='));
        return { base: tag.toLowerCase().split('-')[0], q: q ? Number(q.slice(2)) || 0 : 1, i };
      })
      .sort((a, b) => b.q - a.q || a.i - b.i);
    for (const r of ranked) if (r.q > 0 && isLang(r.base)) return r.base;
  }
  return fallback;
}
