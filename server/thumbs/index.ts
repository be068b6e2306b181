/**
 * Thumbnails: generators, the state machine (dispatch after writes and syncs,
 * backfill, sweeper), the cache and the signed URLs listings embed. The
 * dispatcher exists before the catalogue (its hooks are the catalogue's);
 * the service that runs the generators comes with the file service.
 */
import type { Db, TenantScope } from '../db';
import type { EventBus } from '../events';
import type { StorageOps } from '../files/internal';
import type { Logger } from '../lib/log';
import { configureStamps } from './stamp';
import { ThumbService } from './thumbs.service';
import { missingToolWarnings, thumbTools } from './tools';
import { probeSvg } from '../lib/sharp';

export { ThumbService, THUMB_CONCURRENCY, removeThumbFiles, type BackfillOptions, type BackfillSummary, type Outcome } from './thumbs.service';
export { ThumbDispatcher, THUMB_JOB, type DrainResult } from './dispatcher';
export { thumbUrl, thumbToken, verifyStamp, verifyToken, configureStamps, THUMB_SIZES } from './stamp';
export { thumbCapabilities, thumbTools, missingToolWarnings, type ThumbTools } from './tools';
export { kindOf, type ThumbKind } from './kinds';
export { PdfRenditions, PDF_TIMEOUT_MS } from './pdf-rendition';
export type { ThumbState } from '../catalogue';

export interface ThumbsOptions {
  db: Db;
  ops: StorageOps;
  bus: EventBus;
  /** The tenant of a storage's changes (catalogue `storageTenant`). */
  tenantOf: (storageId: number) => TenantScope;
  /** Every tenant that has a storage (`StoragesRepo.tenants`). */
  tenants: () => TenantScope[];
  cacheDir: string;
  secretKey: Buffer;
  /** SERVICE_THUMBS_URL_TTL in ms (0 = 24 h). */
  urlTtlMs: number;
  log: Logger;
}

/**
 * Builds the thumbnail service and configures the URL stamps. `ready` resolves once the tools are known (sharp's
 * SVG support is asked of a child process: lib/sharp.ts), after naming each missing tool in a warning; the service
 * awaits it before it listens, so the first capabilities are truthful.
 */
export function createThumbs(o: ThumbsOptions): { service: ThumbService; ready: Promise<void> } {
  configureStamps(o.secretKey, o.urlTtlMs);
  const ready = probeSvg().then(() => {
    for (const w of missingToolWarnings(thumbTools(true))) o.log.warn(w);
  });
  return { service: new ThumbService(o.db, o.ops, o.bus, o.tenantOf, o.tenants, o.cacheDir, o.log), ready };
}
