/**
 * Folders known to exist on a target, so a copy into a folder the engine has
 * already made skips the `mkdir` (two round trips on SFTP: the refused mkdir
 * and the stat that confirms a folder). Kept per live target driver (a new
 * driver after a config change starts empty). The engine forgets a folder
 * when it deletes or moves it on the target and when a write into it fails;
 * a folder removed on the target by someone else shows as a failed write
 * (then made again).
 */
import type { RDriver } from './types';

/** Folders remembered per target at most; past it the set starts over (a re-made folder costs one mkdir). */
const MAX_DIRS = 10_000;

export class TargetDirs {
  private known = new WeakMap<RDriver, Set<string>>();

  has(target: RDriver, dir: string): boolean {
    return this.known.get(target)?.has(dir) ?? false;
  }

  add(target: RDriver, dir: string): void {
    let set = this.known.get(target);
    if (!set || set.size >= MAX_DIRS) this.known.set(target, (set = new Set()));
    set.add(dir);
  }

  /** Forgets `rel` and every folder below it ('' = all of them). */
  forget(target: RDriver, rel: string): void {
    const set = this.known.get(target);
    if (!set) return;
    if (rel === '') return set.clear();
    for (const d of set) if (d === rel || d.startsWith(`${rel}/`)) set.delete(d);
  }
}
