/**
 * The Files API's domain: listings, raw downloads, the verbs, search, and the
 * transfer op. `createFiles` wires the parts and registers the transfer job
 * (like the syncer does for its own).
 */
import type { Catalogue } from '../catalogue';
import type { Db } from '../db';
import type { EventBus } from '../events';
import type { JobQueue } from '../jobs';
import { ListingRepo } from './listing.repo';
import { ListingService } from './listing.service';
import { DownloadService } from './download.service';
import { VerbsService } from './verbs.service';
import { SearchService } from './search.service';
import { Transfer, TRANSFER_JOB, type TransferPayload } from './transfer';

export { ListingService, type ListInput } from './listing.service';
export { DownloadService, byteranges, type RawFile } from './download.service';
export { VerbsService, NEWDOC_TYPES, MAX_DELETE_PATHS, MAX_TEXT_BYTES, SYNC_COPY_MAX, type Caller, type TransferResult } from './verbs.service';
export { SearchService, type SearchInput, type SearchResult } from './search.service';
export { planRange, ifRangeAllows, notModified, contentDisposition, type Span, type RangePlan } from './ranges';
export { presentNode, etagOf, type FileEntry } from './entry';
export { TRANSFER_JOB } from './transfer';
export type { SortField } from './listing.repo';

/** `thumbUrl` signs the `thumb_url` of listing and search rows (the thumbnails module's stamp). */
export function createFiles(d: { db: Db; bus: EventBus; catalogue: Catalogue; queue: JobQueue; thumbUrl?: (id: number) => string }) {
  const transfer = new Transfer(d.catalogue);
  d.queue.register<TransferPayload>(TRANSFER_JOB, (ctx) => transfer.run(ctx), { concurrency: 2, maxAttempts: 1 });
  const listing = new ListingService(d.catalogue, new ListingRepo(d.db), d.thumbUrl);
  d.bus.on('folder.changed', (e) => listing.folderChanged(e.storage_id, e.folder, e.kind));
  return {
    listing,
    download: new DownloadService(d.catalogue),
    verbs: new VerbsService(d.catalogue, d.queue),
    search: new SearchService(d.db, d.catalogue, d.thumbUrl),
  };
}

export type Files = ReturnType<typeof createFiles>;
