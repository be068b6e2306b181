/**
 * Language packs installed from a store (docs/app-store.md, "Language packs"):
 * the pack the store's index describes (size and sha256 already checked by
 * the store) is read and checked against English, stored in one statement,
 * then served from memory (lib/i18n/packs.ts) to every sentence look-up and
 * to the renderer. Uninstalling a pack moves its readers back to English.
 */
import { actorRef, type Actor } from '../auth';
import { AppError } from '../errors';
import type { EventBus } from '../events';
import { LANGS, languagePacks } from '../lib/i18n';
import type { LanguagePacksRepo } from './language-packs.repo';
import { readPack } from './language-pack';
import type { StoreEntry, StoreVersion } from './format';
import { storeError } from './format';

export class LanguagePackStore {
  constructor(private d: { repo: LanguagePacksRepo; bus: EventBus }) {}

  /** Puts the installed packs in memory (at start). A stored pack that no longer reads is skipped, not fatal. */
  async load(): Promise<void> {
    for (const row of await this.d.repo.list()) {
      try {
        const p = readPack(Buffer.from(row.pack));
        languagePacks.set({ id: p.id, name: p.name, version: p.version, strings: p.strings });
      } catch {
        languagePacks.delete(row.id);
      }
    }
  }

  /** Installed packs: id → version (the store's intents compare versions with it). */
  installed(): Map<string, { version: string; permissions: string[] }> {
    return new Map(languagePacks.list().map((p) => [p.id, { version: p.version, permissions: [] }]));
  }

  /** A built-in language is not a pack: nothing installs over English or Turkish. */
  refuseBuiltIn(id: string): void {
    if ((LANGS as readonly string[]).includes(id))
      throw new AppError('intent_unsupported', { reason: 'built_in_language', id }, { kind: 'language-pack', reason: 'built_in_language', id });
  }

  /** Installs (or replaces) the verified bytes of `entry` at `v`. */
  async install(by: Actor, store: number, entry: StoreEntry, v: StoreVersion, sha256: string, bytes: Buffer, from?: string) {
    const p = readPack(bytes);
    if (p.id !== entry.id || p.version !== v.version)
      throw storeError('store_invalid', 'index_mismatch', { file: v.file, id: p.id, version: p.version }, 'language-pack');
    await this.d.repo.put({
      id: p.id,
      name: p.name,
      version: p.version,
      store_id: store,
      sha256,
      pack: bytes.toString('utf8'),
      installed_at: new Date().toISOString(),
    });
    languagePacks.set({ id: p.id, name: p.name, version: p.version, strings: p.strings });
    this.audit(by, 'app_store.install', p.id, { store, version: v.version, sha256, ...(from && { from }) });
    return { id: p.id, kind: 'language-pack', name: p.name, version: p.version };
  }

  async uninstall(by: Actor, id: string) {
    if (!(await this.d.repo.remove(id))) throw new AppError('not_found', { path: `language pack ${id}` });
    languagePacks.delete(id);
    this.audit(by, 'app_store.uninstall', id, {});
    return { ok: true };
  }

  private audit(by: Actor, action: string, id: string, meta: Record<string, unknown>) {
    void this.d.bus.emit('audit', { action, actor: actorRef(by), request: by.request, resource: `language:${id}`, meta: { kind: 'language-pack', ...meta } });
  }
}
