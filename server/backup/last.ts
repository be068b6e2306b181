/**
 * The last backup made by any door (the CLI, the schedule, "back up now"),
 * recorded in the `meta` table through its store: Admin → Status shows its
 * age without listing a storage.
 */
import type { MetaStore } from '../db';
import type { LastBackup } from '../contract';

const KEY = 'last_backup';

export async function recordBackup(meta: MetaStore, b: LastBackup): Promise<void> {
  await meta.set(KEY, JSON.stringify(b));
}

/** The last backup recorded, or null (none yet, or an unreadable record). */
export async function lastBackup(meta: MetaStore): Promise<LastBackup | null> {
  const raw = await meta.get(KEY);
  if (!raw) return null;
  try {
    const v = JSON.parse(raw) as LastBackup;
    return typeof v.at === 'string' && typeof v.file === 'string' ? v : null;
  } catch {
    return null;
  }
}
