/**
 * Public links: share links, the PIN gate, download caps, folder ZIPs and
 * file requests. `createShares` wires the parts; the HTTP layer and main.ts
 * use this face only.
 */
import type { Auth, TenantQuotas } from '../auth';
import type { Catalogue } from '../catalogue';
import type { Db, TenantScope } from '../db';
import type { EventBus, Mailer } from '../events';
import type { FileService } from '../files';
import type { SettingsStore } from '../settings';
import type { UploadsService } from '../uploads';
import { DropsService } from './drops.service';
import { LinkGuard, type GuardLease, type GuardLimits } from './link-guard';
import { ShareZips } from './share-zip';
import { SharesRepo, shareStorage, type ShareRow } from './shares.repo';
import { SharesService } from './shares.service';

export {
  SharesService,
  statOrRevoked,
  unavailable,
  APP_LINK_MAX_FILES,
  type ShareView,
  type OpenShare,
  type CreateShareInput,
  type CreateAppLinkInput,
  type AppLinkFile,
  type DropSettings,
  type DownloadSlot,
} from './shares.service';
export { PIN_MAX_FAILS, PIN_LOCK_MS, DOWNLOAD_TOKEN_MS } from './link-pin';
export { dropSettingsOf, DROP_DEFAULTS } from './share-views';
export { DropsService, DROP_CHUNK, NOTE_NAME, submissionFolderName, cleanUploader, cleanNote, uniqueName } from './drops.service';
export { ShareZips, fingerprint, type ZipStatus } from './share-zip';
export { SharesRepo, type ShareRow } from './shares.repo';
export { pt, ptn, publicDate, type PublicKey } from './public-i18n';
export { RateLimiter } from './rate-limit';
export { LinkGuard, ACCELERATOR_UA, ACCEL_STRIKES, type GuardLease, type GuardLimits, type Visit } from './link-guard';

export interface SharesDeps {
  db: Db;
  auth: Auth;
  catalogue: Catalogue;
  files: FileService;
  settings: SettingsStore;
  bus: EventBus;
  uploads: UploadsService;
  mailer: Mailer;
  secretKey: Buffer;
  publicUrl: string;
  zipDir: string;
  zipWarmMaxBytes: number;
  zipMaxAgeMs: number;
  /** The uplink guard's limits, read on each public request (settings over environment). */
  guardLimits: () => GuardLimits;
  /** This instance's id and lease on the public streams it admits (counted in the database across instances). */
  guardLease: GuardLease;
  log: (msg: string, err?: unknown) => void;
  /** The governor's lane for each ZIP warm-up. */
  warmLane?: (signal: AbortSignal) => Promise<() => void>;
  /** The tenants' quotas (multi-tenant mode): a new link counts against `links`. */
  quotas?: TenantQuotas | null;
  /** Multi-tenant mode: where a tenant's links start for someone elsewhere (`TenantDirectory.address`). */
  tenantAddress?: (t: TenantScope, installation: string) => string;
}

/** Builds the share service, the ZIP cache and the drop service around one repository. */
export function createShares(d: SharesDeps) {
  const repo = new SharesRepo(d.db);
  let zips: ShareZips | null = null;
  let guard: LinkGuard | null = null;
  const service = new SharesService({
    repo,
    auth: d.auth,
    catalogue: d.catalogue,
    files: d.files,
    settings: d.settings,
    bus: d.bus,
    secretKey: d.secretKey,
    publicUrl: d.publicUrl,
    onEnded: (id) => void zips?.ended(id),
    onCreated: (row) => void zips?.warmOne(row),
    onResumed: (row) => guard?.forget(row),
    linkLimit: d.quotas ? (t) => d.quotas!.limit(t, 'links') : undefined,
    tenantAddress: d.tenantAddress,
  });
  guard = new LinkGuard(service, d.guardLimits, d.db, d.guardLease, d.log);
  zips = new ShareZips({
    catalogue: d.catalogue,
    files: d.files,
    shares: service,
    dir: d.zipDir,
    warmMaxBytes: d.zipWarmMaxBytes,
    maxAgeMs: d.zipMaxAgeMs,
    log: d.log,
    lane: d.warmLane,
  });
  const drops = new DropsService({ shares: service, uploads: d.uploads, files: d.files, catalogue: d.catalogue, bus: d.bus, mailer: d.mailer, log: d.log });
  /** Hourly, tenant by tenant: sweep links dead for 7 days, announce abandoned drop submissions, drop their archives. */
  const sweep = async (scope: TenantScope) => {
    for (const id of await service.sweep(scope)) await zips!.ended(id);
    await drops.sweepStale(scope);
    await guard!.prune(scope);
  };
  /** One page of a shared folder from the catalogue, folders first by name. */
  const browse = (share: ShareRow, dir: string, limit: number) =>
    d.catalogue.nodes.list(shareStorage(share), dir, { sort: 'name', desc: false, limit, offset: 0 });
  /** The catalogue row of a path of the share's storage (thumbnail state), or undefined. */
  const node = (share: ShareRow, rel: string) => d.catalogue.nodes.get(shareStorage(share), rel);
  return { service, zips, drops, guard, mailer: d.mailer, sweep, browse, node };
}

export type Shares = ReturnType<typeof createShares>;
