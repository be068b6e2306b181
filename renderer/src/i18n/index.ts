/**
 * UI language: the built-in English and Turkish catalogues, catalogues of
 * language packs installed from a store (fetched when picked, docs/app-store.md
 * "Language packs"), a React context, and `t()`. The choice is stored on the
 * account (PATCH /api/auth/me) and in localStorage for the sign-in page, which
 * has no account yet.
 */
import { createContext, useContext } from 'react';
import { en, type MessageKey } from './en';
import { tr } from './tr';

/** The languages built into the renderer; installed packs come from GET /api/i18n/languages. */
export const LANGS = { en: 'English', tr: 'Türkçe' } as const;
/** A built-in language or an installed language pack's id (`de`). */
export type Lang = string;
export type { MessageKey };
export type Translate = (key: MessageKey, params?: Record<string, string | number>) => string;

/** Loaded catalogues by language: the built-in ones, then each pack once fetched. */
const catalogues: Record<string, Record<string, string>> = { en, tr };

/** True when `v` is a language whose strings are here (built in, or a pack already fetched). */
export const isLang = (v: unknown): v is Lang => typeof v === 'string' && Object.hasOwn(catalogues, v);

/** A language tag a pack may carry (`de`, `pt-BR`): worth asking the server for. */
const PACK_ID = /^[a-z]{2,3}(-[A-Z]{2})?$/;

/**
 * Makes `lang` usable: a built-in language at once, a pack by fetching its UI strings
 * (GET /api/i18n/languages/{id}, public). False when the server has no such pack.
 */
export async function loadLang(lang: string): Promise<boolean> {
  if (isLang(lang)) return true;
  if (!PACK_ID.test(lang)) return false;
  try {
    const res = await fetch(`/api/i18n/languages/${encodeURIComponent(lang)}`, { headers: { Accept: 'application/json' }, cache: 'no-cache' });
    if (!res.ok) return false;
    const body = (await res.json()) as { strings?: Record<string, string> };
    catalogues[lang] = body.strings ?? {};
    return true;
  } catch {
    return false;
  }
}

/** Plural rules of `lang` from Intl (English's for a tag Intl does not know). */
const pluralRules = (lang: string) => {
  try {
    return new Intl.PluralRules(lang);
  } catch {
    return new Intl.PluralRules('en');
  }
};

/**
 * `{name}` marks filled from params; an unknown mark stays visible so a missing value is noticed.
 * A numeric `n` picks the plural form by the language's ICU rules (Intl.PluralRules):
 * `<key>.one` when the language says "one" for it and the catalogue has that form, else `<key>`.
 * A key the catalogue lacks (a pack older than this UI) shows in English.
 */
export function translator(lang: Lang): Translate {
  const cat: Record<string, string> = catalogues[lang] ?? en;
  const rules = pluralRules(lang);
  return (key, params) => {
    const n = params?.n;
    const form = typeof n === 'number' && rules.select(n) === 'one' ? cat[`${key}.one`] : undefined;
    return (form ?? cat[key] ?? en[key] ?? key).replace(/\{(\w+)\}/g, (m, k: string) => (params && params[k] !== undefined ? String(params[k]) : m));
  };
}

/**
 * The language to start with: the stored choice, then the browser's, then English. A pack's id
 * may come back before its strings are loaded (loadLang); until then the UI reads English.
 */
export function initialLang(): Lang {
  const stored = globalThis.localStorage?.getItem('filedock.lang');
  if (stored && (isLang(stored) || PACK_ID.test(stored))) return stored;
  const nav = globalThis.navigator?.language?.slice(0, 2);
  return isLang(nav) ? nav : 'en';
}

export interface I18n {
  lang: Lang;
  t: Translate;
  setLang: (l: Lang) => void;
}

export const I18nContext = createContext<I18n>({ lang: 'en', t: translator('en'), setLang: () => {} });
export const useI18n = (): I18n => useContext(I18nContext);
