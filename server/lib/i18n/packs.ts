/**
 * The language packs installed from a store (docs/app-store.md, "Language
 * packs"), kept in memory for the sentence look-ups of every request. The
 * store's language-pack service is the only writer: it loads the installed
 * packs at start and changes this set after each install or uninstall commits.
 */
import type { Catalogue } from './catalogue';

export interface PackStrings {
  /** The web UI's keys (renderer/src/i18n/en). */
  ui: Record<string, string>;
  /** Error sentences by code (./catalogue.ts); a code with several forms lists them in English's order. */
  errors: Catalogue;
  /** Public pages and e-mails (server/shares/public-i18n.ts). */
  public: Record<string, string>;
}

interface InstalledLanguage {
  id: string;
  name: string;
  version: string;
  strings: PackStrings;
}

const installed = new Map<string, InstalledLanguage>();

export const languagePacks = {
  get: (id: string): InstalledLanguage | undefined => installed.get(id),
  list: (): InstalledLanguage[] => [...installed.values()].sort((a, b) => a.id.localeCompare(b.id)),
  set: (p: InstalledLanguage): void => void installed.set(p.id, p),
  delete: (id: string): void => void installed.delete(id),
};
