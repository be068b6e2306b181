/**
 * Thumbnails: generators, the state machine (dispatch after writes, backfill,
 * sweeper), the cache and the signed URLs listings embed.
 */
import type { Db } from '../db';
import type { JobQueue } from '../jobs';
import type { Catalogue } from '../catalogue';
import type { Logger } from '../lib/log';
import { configureStamps } from './stamp';
import { ThumbService } from './thumbs.service';
import { ThumbDispatcher } from './dispatcher';
import { configureSharp } from './generators';
import { missingToolWarnings, thumbTools } from './tools';

export { ThumbService, THUMB_CONCURRENCY, type BackfillOptions, type BackfillSummary, type Outcome } from './thumbs.service';
export { ThumbDispatcher, THUMB_JOB, type DrainResult } from './dispatcher';
export { thumbUrl, thumbToken, verifyStamp, verifyToken, configureStamps, THUMB_SIZES } from './stamp';
export { thumbCapabilities, thumbTools, missingToolWarnings, type ThumbTools } from './tools';
export { kindOf, type ThumbKind } from './kinds';
export type { ThumbState } from './thumbs.repo';

export interface ThumbsOptions {
  db: Db;
  catalogue: Catalogue;
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
  return new ThumbService(o.db, o.catalogue, o.cacheDir, o.log);
}

/** Wires the service into a running server: the `thumb` op kind and the write-gate hook. */
export function attachThumbs(thumbs: ThumbService, queue: JobQueue, catalogue: Catalogue): ThumbDispatcher {
  const dispatcher = new ThumbDispatcher(thumbs, queue);
  dispatcher.register();
  catalogue.gate.addHook('thumbnail', dispatcher.hook());
  // Purging a file removes its thumbnail at once (trashing keeps the node, so it keeps the thumbnail).
  catalogue.gate.addRemoveHook('thumbnail', (_storageId, ids) => thumbs.remove(ids));
  return dispatcher;
}
