/**
 * One change at a time per folder, within this process: a folder check (list the backend, then
 * reconcile the rows) and a move through the file service (the backend's rename, then the gate's
 * record of it) that touch the same folder take turns. Otherwise a check between a rename and its
 * record sees the old name gone and the new one unknown, and catalogues the item as a new node:
 * whatever hung on the old one (shares, versions, thumbnails, an app's lock) would be lost.
 * Several instances watching one shared folder are not covered (docs/operations.md, "Known races").
 */
export class FolderTurns {
  /** Per `storage:folder`: the promise the next comer waits for. */
  private tails = new Map<string, Promise<void>>();

  /** Runs `fn` once every folder in `dirs` of storage `storageId` is free, holding them meanwhile. */
  async run<T>(storageId: number, dirs: string[], fn: () => Promise<T>): Promise<T> {
    // Taken in one order by everyone, so two holders of several folders never wait on each other.
    const keys = [...new Set(dirs.map((d) => `${storageId}:${d}`))].sort();
    const held: Array<() => void> = [];
    try {
      for (const k of keys) held.push(await this.take(k));
      return await fn();
    } finally {
      for (const release of held.reverse()) release();
    }
  }

  private async take(key: string): Promise<() => void> {
    const before = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const tail = before.then(() => mine);
    this.tails.set(key, tail);
    await before;
    return () => {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    };
  }
}
