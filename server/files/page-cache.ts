/**
 * Serialised listing pages kept in memory, keyed by the folder's change
 * counter: a `folder.changed` event bumps the folder's counter (and a removal
 * or move bumps the whole storage's, since whole subtrees can go or be
 * replaced), so a stale page is never served. Bounded by total bytes (LRU).
 */
export class PageCache<V extends { bytes: number }> {
  private folderGen = new Map<string, number>();
  private storageGen = new Map<number, number>();
  private pages = new Map<string, { stamp: string; value: V }>();
  private bytes = 0;
  /** Bumped when the generations restart, so no stamp taken before matches again. */
  private epoch = 0;

  constructor(private maxBytes = 32 * 1024 * 1024) {}

  /** Called for every change of a folder's content. */
  changed(storageId: number, folder: string, structural: boolean): void {
    const k = `${storageId}:${folder}`;
    this.folderGen.set(k, (this.folderGen.get(k) ?? 0) + 1);
    if (structural) this.storageGen.set(storageId, (this.storageGen.get(storageId) ?? 0) + 1);
    if (this.folderGen.size > 100_000) this.clear();
  }

  /** The cached page for `key` of folder (storageId, folder), or undefined when absent or stale. */
  get(storageId: number, folder: string, key: string): V | undefined {
    const hit = this.pages.get(key);
    if (!hit) return undefined;
    if (hit.stamp !== this.stampOf(storageId, folder)) {
      this.drop(key);
      return undefined;
    }
    this.pages.delete(key);
    this.pages.set(key, hit); // most recently used last
    return hit.value;
  }

  /**
   * Stores a page; `stamp` (from `stampOf`) when it was computed from an
   * earlier generation than now (made asynchronously): a change in between
   * then leaves it stale, never served.
   */
  set(storageId: number, folder: string, key: string, value: V, stamp = this.stampOf(storageId, folder)): void {
    if (value.bytes > this.maxBytes / 4) return;
    this.drop(key);
    this.pages.set(key, { stamp, value });
    this.bytes += value.bytes;
    for (const k of this.pages.keys()) {
      if (this.bytes <= this.maxBytes) break;
      this.drop(k);
    }
  }

  /** The folder's current generation. */
  stampOf(storageId: number, folder: string): string {
    return `${this.epoch}.${this.storageGen.get(storageId) ?? 0}.${this.folderGen.get(`${storageId}:${folder}`) ?? 0}`;
  }

  private drop(key: string): void {
    const hit = this.pages.get(key);
    if (!hit) return;
    this.bytes -= hit.value.bytes;
    this.pages.delete(key);
  }

  /** Forgets every page (another instance's changes may have been missed). */
  clear(): void {
    // Generations restart: every cached page must go with them, or an old stamp could match again.
    this.folderGen.clear();
    this.storageGen.clear();
    this.pages.clear();
    this.bytes = 0;
    this.epoch++;
  }
}
