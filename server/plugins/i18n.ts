/** An app's own texts (its language packs): the reader's language, then the app's default language. */
import type { InstalledApp } from './registry/apps.repo';

export function packText(app: InstalledApp, key: string, lang: string): string | undefined {
  return app.languages[lang]?.[key] ?? app.languages[app.manifest.default_language]?.[key];
}

/** A label as the spec's rows carry it: `{lang: text}` for every language the app ships. */
export function labelMap(app: InstalledApp, key: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [lang, pack] of Object.entries(app.languages)) if (pack[key] !== undefined) out[lang] = pack[key];
  return out;
}
