/**
 * The file service (DESIGN: "File service (every door)"): `FileService`
 * hands each door an actor-scoped face, `forActor(actor)`, through which
 * paths are resolved, access is checked, storages are reached and every write
 * ends in the write gate. Nothing else but the catalogue's sync engine
 * reaches a driver or the gate. Trusted internal modules (protection,
 * thumbnails) use the place-addressed storage operations of `./internal`.
 */
export { FileService, type FilesDeps, type FilePorts, type TrashPort, type VersionsPort, type NewdocPort, type QuotaPort } from './file-service';
export type { QuotaTurn } from './quota-turn';
export {
  ActorFiles,
  NEWDOC_TYPES,
  MAX_DELETE_PATHS,
  MAX_TEXT_BYTES,
  SYNC_COPY_MAX,
  type OpenFile,
  type Path,
  type TransferResult,
  type WriteOptions,
} from './actor-files';
export type { StagedWrite } from './staged-write';
export type { Place, Target, TargetOptions } from './access';
export type { ListInput, ListedEntry } from './listing.service';
export type { PageEncoding } from './compressed-pages';
export type { SearchInput, SearchResult } from './search.service';
export { planRange, ifRangeAllows, notModified, contentDisposition, type Span, type RangePlan } from './ranges';
export { presentNode, etagOf, servedEtag, type FileEntry } from './entry';
export { MAX_APP_STATE, type FileLocks, type AppStates, type FileLock, type LockInput, type LockView } from '../catalogue';
export { TRANSFER_JOB } from './transfer';
export { Homes, type HomesView } from './homes';
export type { SortField } from './listing.repo';
export type { Entry as FileStat } from '../storage';
