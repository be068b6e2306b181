/**
 * Language packs installed from a store (docs/app-store.md, "Language packs"):
 * the pack the store's index describes (size and sha256 already checked by
 * the store) is read and checked against English, stored in one statement,
 * then served from memory (lib/i18n/packs.ts) to every sentence look-up and
 * to the renderer. Uninstalling a pack moves its readers back to English.
 * Instances sharing a database (PostgreSQL) tell each other through the change
 * channel, and each re-reads the table: a pack installed on one is served by
 * all without a restart.
 */
import { actorRef, actorTenant, type Actor } from '../auth';
import { AppError } from '../errors';
import type { ChangeChannel } from '../db';
import type { EventBus } from '../events';
import { LANGS, languagePacks } from '../lib/i18n';
import type { LanguagePacksRepo } from './language-packs.repo';
import { readPack } from './language-pack';
import type { StoreEntry, StoreVersion } from './format';
import { storeError } from './format';

/** The change-channel notice: the installed packs changed (its data is nothing; receivers read the table). */
const NOTICE = 'language_packs';

export class LanguagePackStore {
  private channel: ChangeChannel | null = null;
  /** One re-read at a time, in order of the notices. */
  private reading: Promise<void> = Promise.resolve();
  constructor(private d: { repo: LanguagePacksRepo; bus: EventBus; log?: (msg: string, err?: unknown) => void }) {}

  /**
   * Makes the packs in memory the stored ones (at start, and after another instance changed them). A stored
   * pack that no longer reads is skipped, not fatal; a pack no longer stored leaves.
   */
  async load(): Promise<void> {
    const rows = await this.d.repo.list();
    const kept = new Set<string>();
    for (const row of rows) {
      try {
        const p = readPack(Buffer.from(row.pack));
        languagePacks.set({ id: p.id, name: p.name, version: p.version, strings: p.strings });
        kept.add(p.id);
      } catch {
        languagePacks.delete(row.id);
      }
    }
    for (const p of languagePacks.list()) if (!kept.has(p.id)) languagePacks.delete(p.id);
  }

  /** Follows installs and uninstalls made through other instances (and re-reads after notices may have been lost). */
  attachChannel(channel: ChangeChannel): void {
    this.channel = channel;
    channel.subscribe((event) => {
      if (event !== NOTICE && event !== 'resync') return;
      // A failed re-read (database away) keeps the packs in memory; the next notice or resync reads again.
      this.reading = this.reading.then(() => this.load()).catch((e) => this.d.log?.('re-reading the language packs failed', e));
    });
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
    this.channel?.publish(NOTICE, null);
    this.audit(by, 'app_store.install', p.id, { store, version: v.version, sha256, ...(from && { from }) });
    return { id: p.id, kind: 'language-pack', name: p.name, version: p.version };
  }

  async uninstall(by: Actor, id: string) {
    if (!(await this.d.repo.remove(id))) throw new AppError('not_found', { path: `language pack ${id}` });
    languagePacks.delete(id);
    this.channel?.publish(NOTICE, null);
    this.audit(by, 'app_store.uninstall', id, {});
    return { ok: true };
  }

  private audit(by: Actor, action: string, id: string, meta: Record<string, unknown>) {
    void this.d.bus.emit(actorTenant(by), 'audit', {
      action,
      actor: actorRef(by),
      request: by.request,
      resource: `language:${id}`,
      meta: { kind: 'language-pack', ...meta },
    });
  }
}
