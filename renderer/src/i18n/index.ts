/**
 * UI language: English and Turkish catalogues, a React context, and `t()`.
 * The choice is stored on the account (PATCH /api/auth/me) and in localStorage
 * for the sign-in page, which has no account yet.
 */
import { createContext, useContext } from 'react';
import { en, type MessageKey } from './en';
import { tr } from './tr';

export const LANGS = { en: 'English', tr: 'Türkçe' } as const;
export type Lang = keyof typeof LANGS;
export type { MessageKey };
export type Translate = (key: MessageKey, params?: Record<string, string | number>) => string;

const catalogues: Record<Lang, Record<MessageKey, string>> = { en, tr };

export const isLang = (v: unknown): v is Lang => typeof v === 'string' && v in LANGS;

/**
 * `{name}` marks filled from params; an unknown mark stays visible so a missing value is noticed.
 * A numeric `n` picks the plural form by the language's ICU rules (Intl.PluralRules):
 * `<key>.one` when the language says "one" for it and the catalogue has that form, else `<key>`.
 */
export function translator(lang: Lang): Translate {
  const cat: Record<string, string> = catalogues[lang];
  const rules = new Intl.PluralRules(lang);
  return (key, params) => {
    const n = params?.n;
    const form = typeof n === 'number' && rules.select(n) === 'one' ? cat[`${key}.one`] : undefined;
    return (form ?? cat[key] ?? en[key] ?? key).replace(/\{(\w+)\}/g, (m, k: string) => (params && params[k] !== undefined ? String(params[k]) : m));
  };
}

/** The language to start with: the stored choice, then the browser's, then English. */
export function initialLang(): Lang {
  const stored = globalThis.localStorage?.getItem('filedock.lang');
  if (isLang(stored)) return stored;
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
