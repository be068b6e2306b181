/**
 * Thumbnails: generators, the state machine (dispatch after writes and syncs,
 * backfill, sweeper), the cache and the signed URLs listings embed. The
 * dispatcher exists before the catalogue (its hooks are the catalogue's);
 * the service that runs the generators comes with the file service.
 */
import type { Db } from '../db';
import type { EventBus } from '../events';
import type { StorageOps } from '../files/internal';
import type { Logger } from '../lib/log';
import { configureStamps } from './stamp';
import { ThumbService } from './thumbs.service';
import { configureSharp } from './generators';
import { missingToolWarnings, thumbTools } from './tools';

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
  cacheDir: string;
  secretKey: Buffer;
  /** SERVICE_THUMBS_URL_TTL in ms (0 = 24 h). */
  urlTtlMs: number;
  log: Logger;
}

/** Builds the thumbnail service, configures the URL stamps and sharp, and names each missing tool in a warning. */
export function createThumbs(o: ThumbsOptions): ThumbService {
  configureStamps(o.secretKey, o.urlTtlMs);
  configureSharp();
  for (const w of missingToolWarnings(thumbTools(true))) o.log.warn(w);
  return new ThumbService(o.db, o.ops, o.bus, o.cacheDir, o.log);
}
