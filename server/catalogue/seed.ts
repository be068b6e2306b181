/**
 * First-boot seeding: when no storage exists and SERVICE_DEFAULT_STORAGE_DRIVER
 * is set, one storage is created from the SERVICE_DEFAULT_STORAGE_* keys. A
 * meta row remembers it, so it is never re-seeded (even after the storage is deleted). It starts closed
 * (`rbac_enabled`): the admin alone, and each person in their home folder (files/homes.ts), whose storage
 * defaults to this one (its id in meta `default_storage_id`).
 */
import type { Config } from '../config';
import { DEFAULT_TENANT, type Db } from '../db';
import type { Logger } from '../lib/log';
import type { StoragesRepo } from './storages.repo';
import type { StoragesService } from './storages.service';

const SEEDED = 'default_storage_seeded';
/** Where the seeded storage's id is recorded (files/homes.ts reads it). */
export const DEFAULT_STORAGE_META = 'default_storage_id';

export async function seedDefaultStorage(config: Config, db: Db, repo: StoragesRepo, storages: StoragesService, log: Logger): Promise<void> {
  if (!config.defaultStorageDriver) return;
  if (await db.meta.get(SEEDED)) return;
  // First-run seeding is tenant 1's (the platform operator's).
  if (repo.all(DEFAULT_TENANT).length > 0) return;
  const driver = config.defaultStorageDriver;
  let cfg: Record<string, unknown> = { ...(config.defaultStorageConfig ?? {}) };
  if (driver === 'local' && config.defaultStoragePath) cfg.path ??= config.defaultStoragePath;
  if (driver === 's3') {
    const s3: Record<string, unknown> = {
      bucket: config.defaultS3Bucket,
      prefix: config.defaultS3Prefix,
      endpoint: config.defaultS3Endpoint,
      region: config.defaultS3Region,
      access_key: config.defaultS3AccessKey,
      secret_key: config.defaultS3SecretKey,
      path_style: config.defaultS3PathStyle,
    };
    cfg = { ...Object.fromEntries(Object.entries(s3).filter(([, v]) => v !== '')), ...cfg };
  }
  try {
    const s = await storages.create(
      DEFAULT_TENANT,
      { name: config.defaultStorageName, driver, config: cfg, rbac_enabled: true },
      { request: { ip: 'seed', ua: 'first-boot' } },
    );
    await db.meta.setIfAbsent(DEFAULT_STORAGE_META, String(s.id));
    log.info(`seeded storage "${s.name}" (${driver}: ${s.config_summary})`);
  } catch (e) {
    log.error(`could not seed the default storage (${driver})`, e);
    return;
  }
  await db.meta.set(SEEDED, new Date().toISOString());
}
