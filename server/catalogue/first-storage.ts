/**
 * The set-up page's first storage: a local folder, by default `~/Filedock` of
 * the user the service runs as (the browser cannot know that home, so the
 * server suggests it). It is offered only while no storage exists, checked
 * before the administrator is created (so a bad path leaves set-up open), and
 * saved through the same storage service the admin console uses. Set-up is first-run seeding: the storage
 * is tenant 1's (`DEFAULT_TENANT`), the platform operator's.
 */
import { constants, promises as fsp } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_TENANT } from '../db';
import { validation } from '../errors';
import type { SaveContext, StorageView, StoragesService } from './storages.service';

const FIELD = 'storage_path';

/** Where the set-up page's folder field starts. */
export const suggestedFirstStorage = (): string => join(homedir(), 'Filedock');

export class FirstStorage {
  constructor(
    private storages: StoragesService,
    private name: string,
  ) {}

  /** The set-up page offers a first storage only while none exists (none came from the environment). */
  offered(): boolean {
    return this.storages.list(DEFAULT_TENANT).length === 0;
  }

  /**
   * The folder exists or can be made, and the service may write there;
   * `validation_failed` on `storage_path` otherwise. Creates a missing folder.
   */
  async check(path: string): Promise<void> {
    if (!this.offered()) throw validation(FIELD, 'a storage exists already');
    const probe = await this.storages.test(DEFAULT_TENANT, { driver: 'local', config: { path } }).catch((e: unknown) => {
      throw validation(FIELD, reasonOf(e));
    });
    if (!probe.ok) throw validation(FIELD, probe.error);
    // The probe lists the folder; writing needs its own check (a read-only mount lists fine).
    const marker = join(path, `.filedock-write-check-${process.pid}`);
    try {
      await fsp.writeFile(marker, '', { flag: 'wx' });
      await fsp.rm(marker, { force: true });
      await fsp.access(path, constants.W_OK);
    } catch (e) {
      throw validation(FIELD, `the service cannot write there (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  }

  /** Saves the checked folder as a local storage named after SERVICE_DEFAULT_STORAGE_NAME. */
  create(path: string, ctx: SaveContext): Promise<StorageView> {
    return this.storages.create(DEFAULT_TENANT, { name: this.name, driver: 'local', config: { path }, rbac_enabled: true }, ctx);
  }
}

function reasonOf(e: unknown): string {
  const params = (e as { params?: { reason?: unknown } }).params;
  return typeof params?.reason === 'string' && params.reason ? params.reason : (e as Error).message;
}
