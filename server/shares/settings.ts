/**
 * `share_max_ttl_days`: the ceiling for new links, an admin-editable setting
 * kept in the `settings` table. `SERVICE_SHARE_MAX_TTL` seeds it once; after
 * that only the setter (the protection API) changes it.
 */
import type { Db } from '../db';
import { AppError } from '../errors';

export const SHARE_MAX_TTL_KEY = 'share_max_ttl_days';
export const SHARE_MAX_TTL_RANGE = { min: 0, max: 3650 } as const;

/** Writes the env value when the row does not exist yet; later boots leave it alone. */
export function seedShareMaxTtlDays(db: Db, days: number): void {
  db.sqlite.prepare('INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT(key) DO NOTHING').run(SHARE_MAX_TTL_KEY, JSON.stringify(days), new Date().toISOString());
}

/** The ceiling in days (0 = none); 7 when the row is missing or unreadable. */
export function getShareMaxTtlDays(db: Db): number {
  const row = db.sqlite.prepare('SELECT value FROM settings WHERE key = ?').get(SHARE_MAX_TTL_KEY) as { value: string } | undefined;
  const v = row ? Number(JSON.parse(row.value)) : NaN;
  return Number.isInteger(v) && v >= SHARE_MAX_TTL_RANGE.min && v <= SHARE_MAX_TTL_RANGE.max ? v : 7;
}

/** Sets the ceiling; applies to links created afterwards. Out of 0..3650 → `validation_failed`. */
export function setShareMaxTtlDays(db: Db, days: number): void {
  if (!Number.isInteger(days) || days < SHARE_MAX_TTL_RANGE.min || days > SHARE_MAX_TTL_RANGE.max)
    throw new AppError('validation_failed', { field: SHARE_MAX_TTL_KEY, reason: '0..3650' }, { field: SHARE_MAX_TTL_KEY });
  db.sqlite.prepare('INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at').run(SHARE_MAX_TTL_KEY, JSON.stringify(days), new Date().toISOString());
}
