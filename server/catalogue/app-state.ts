/**
 * App state on files (SPEC: File entry `app_state`, Limits "at most 32 state
 * keys per file"): flags an app puts on a file, `<plugin>:<key>` items such as
 * `sign:awaiting`, shown in listings and matched by the applies rules
 * (`state`, `no_state`). They live in the node's `app_state` column (a JSON
 * array), so they follow the file through a rename or move, go with it when
 * it is deleted, are not copied, and a listing reads them with the row at no
 * extra cost. The spec's items carry no value: an app keeps values in its own
 * storage.
 */
import type { Db } from '../db';
import type { EventBus } from '../events';
import { AppError } from '../errors';
import { uiPath } from '../lib/paths';
import { APP_ID, WORD, markChange } from './file-locks';
import type { NodesRepo } from './nodes.repo';
import { AppStateRepo } from './app-state.repo';
import type { NamedStorageRef } from './storage-ref';

/** Items per file, all apps together. */
export const MAX_APP_STATE = 32;

export class AppStates {
  private repo: AppStateRepo;

  constructor(
    db: Db,
    private nodes: NodesRepo,
    private bus: EventBus,
    private storageOf: (id: number) => NamedStorageRef,
  ) {
    this.repo = new AppStateRepo(db, bus);
  }

  /**
   * Puts (`on`) or takes away the item `<plugin>:<key>` on the item at `rel`
   * and returns the file's items. A 33rd item → `too_many` (max 32); putting
   * an item that is there, or taking one that is not, changes nothing.
   */
  async set(storageId: number, rel: string, plugin: string, key: string, on: boolean): Promise<string[]> {
    if (typeof plugin !== 'string' || !APP_ID.test(plugin))
      throw new AppError('validation_failed', { field: 'plugin', reason: 'an app id' }, { field: 'plugin' });
    if (typeof key !== 'string' || !WORD.test(key))
      throw new AppError('validation_failed', { field: 'key', reason: 'a short word: a-z, 0-9, . _ -' }, { field: 'key' });
    const item = `${plugin}:${key}`;
    const storage = this.storageOf(storageId);
    const { items, changed } = await this.repo.change(
      storage,
      rel,
      (node) => {
        if (!node || node.deleted_at) throw new AppError('not_found', { path: uiPath(storage.name, rel) });
        const items = parseItems(node.app_state);
        if (items.includes(item) === on) return { items, changed: false };
        if (on && items.length >= MAX_APP_STATE) throw new AppError('too_many', { max: MAX_APP_STATE }, { max: MAX_APP_STATE, field: 'app_state' });
        return { items: on ? [...items, item] : items.filter((x) => x !== item), changed: true };
      },
      [markChange(storageId, rel)],
    );
    if (changed) await this.bus.flush();
    return items;
  }

  /** The items of the item at `rel` ([] when none or not catalogued). */
  async of(storageId: number, rel: string): Promise<string[]> {
    const node = await this.nodes.get(this.storageOf(storageId), rel);
    return node && !node.deleted_at ? parseItems(node.app_state) : [];
  }

  /** Items at `rel` and below it, by path, for those that have any ('' is the whole storage): one query. */
  async within(storageId: number, rel: string): Promise<Map<string, string[]>> {
    return new Map((await this.repo.within(this.storageOf(storageId), rel)).map((r) => [r.path, parseItems(r.app_state)]));
  }
}

/** The column's JSON array; anything unreadable counts as none. */
export function parseItems(raw: string | null): string[] {
  if (!raw) return [];
  try {
    const v = JSON.parse(raw);
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}
