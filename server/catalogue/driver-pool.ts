/**
 * The live driver of each storage: built lazily from its saved row on first
 * use after a start, swapped by the storages service when a save changes it.
 * One lock per storage orders lazy builds and saves, so a build that read an
 * old row can never install itself over a newer save.
 */
import { AppError } from '../errors';
import type { DriverManager, StorageDriver } from '../storage';
import type { StoragesRepo } from './storages.repo';

export class DriverPool {
  private locks = new Map<number, Promise<unknown>>();

  /** `blocked(id)`: why a storage must not be reached now (its volume is gone: catalogue/volumes.ts), or null. */
  constructor(
    readonly manager: DriverManager,
    private repo: StoragesRepo,
    private blocked: (id: number) => string | null = () => null,
  ) {}

  /**
   * The driver serving storage `id`, built from its row when none is live. Unknown storage → `not_found`;
   * a storage whose volume is gone → `storage_unavailable`, before any build (a local driver would create
   * its missing folder on the filesystem left under the mount point).
   */
  async driverFor(id: number): Promise<StorageDriver> {
    const why = this.blocked(id);
    if (why) throw new AppError('storage_unavailable', { reason: why });
    const existing = this.manager.get(id);
    if (existing) return existing;
    if (!this.repo.ofAnyTenant(id)) throw new AppError('not_found');
    return this.serial(id, async () => {
      const again = this.manager.get(id);
      if (again) return again;
      const r = this.repo.ofAnyTenant(id);
      if (!r) throw new AppError('not_found');
      const d = await this.manager.build({ uid: r.uid, driver: r.driver, config: JSON.parse(r.config) });
      await this.manager.install(id, d);
      return d;
    });
  }

  /** Runs `fn` after every earlier call for the same storage settled (saves and lazy builds share it). */
  serial<T>(id: number, fn: () => Promise<T>): Promise<T> {
    const prev = this.locks.get(id) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const settled = next.catch(() => {});
    this.locks.set(id, settled);
    void settled.then(() => {
      if (this.locks.get(id) === settled) this.locks.delete(id);
    });
    return next;
  }
}
