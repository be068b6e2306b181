/**
 * The list of migrations, in order. Add a file `<timestamp>-<name>.ts` and
 * append it here (static imports keep the server bundle self-contained).
 */
import type { Migration } from './types';
import { foundation } from './20261121093000-foundation';
import { catalogue } from './20261121100000-catalogue';
import { uploads } from './20261121120000-uploads';
import { shares } from './20261121130000-shares';
import { protection } from './20261121140000-protection';
import { shareTombstones } from './20261125090000-share-tombstones';
import { thumbPending } from './20261125090000-thumb-pending';
import { opJournal } from './20261125093000-op-journal';
import { uploadPublished } from './20261125094000-upload-published';
import { keysRoles } from './20261125110000-keys-roles';
import { oidc } from './20261126100000-oidc';
import { mfa } from './20261126110000-mfa';
import { deviceKeys } from './20261126120000-device-keys';
import { davProps } from './20261126130000-dav-props';
import { sshKeys } from './20261126130100-ssh-keys';
import { docserver } from './20261127000500-docserver';
import { replication } from './20261127100000-replication';
import { meter } from './20261127110000-meter';
import { assistant } from './20261127120000-assistant';
import { shareSuspension } from './20261127120000-share-suspension';
import { storageVolume } from './20261127130000-storage-volume';
import { fileLocks } from './20261127131500-file-locks';
import { appPlugins } from './20261127140000-app-plugins';
import { appPluginHost } from './20261127150000-app-plugin-host';
import { dropFileOrder } from './20261127150000-drop-file-order';
import { opsLease } from './20261127150000-ops-lease';
import { shareAppPages } from './20261127150000-share-app-pages';
import { loginFailures } from './20261127151000-login-failures';
import { uploadFinalizeLease } from './20261127160000-upload-finalize-lease';
import { linkStreams } from './20261127160100-link-streams';
import { searchNameTrgm } from './20261127170000-search-name-trgm';
import { nodeRemovals } from './20261127180000-node-removals';
import { linkStrikes } from './20261127180100-link-strikes';
import { replicaFailureFrom } from './20261205090000-replica-failure-from';
import { grantPaths } from './20261205090100-grant-paths';
import { nfsExports } from './20261205160000-nfs-exports';
import { textExtracts } from './20261206100000-text-extracts';
import { appStoreConnections } from './20261206130000-app-store-connections';
import { storageOcr } from './20261206140000-storage-ocr';
import { languagePacks } from './20261206141000-language-packs';
import { searchMeta } from './20261206150000-search-meta';
import { appStoreUpdates } from './20261206162000-app-store-updates';
import { storeLicences } from './20261206185500-store-licences';
import { vault } from './20261206190000-vault';
import { tenants } from './20261206220000-tenants';
import { rolesPerTenant } from './20261207010000-roles-per-tenant';
import { liveListing } from './20261207040000-live-listing';
import { searchGinPending } from './20261207050000-search-gin-pending';
import { storagesPerTenant } from './20261207050100-storages-per-tenant';
import { searchKeys } from './20261207080000-search-keys';
import { shareTombstonesTenant } from './20261207080100-share-tombstones-tenant';
import { opsDedupPerTenant } from './20261207110200-ops-dedup-per-tenant';
import { platformOperator } from './20261207110300-platform-operator';
import { nodesTenant } from './20261207150100-nodes-tenant';
import { tenantTombstones } from './20261207160000-tenant-tombstones';
import { assistantVaultTenant } from './20261207180200-assistant-vault-tenant';
import { replicationDocserverTenant } from './20261207180100-replication-docserver-tenant';
import { appPluginsPerTenant } from './20261207180300-app-plugins-per-tenant';
import { tenantLogos } from './20261207180500-tenant-logos';
import { tenantPurged } from './20261207210100-tenant-purged';

export const MIGRATIONS: Migration[] = [
  foundation,
  catalogue,
  uploads,
  shares,
  protection,
  shareTombstones,
  thumbPending,
  opJournal,
  uploadPublished,
  keysRoles,
  oidc,
  mfa,
  deviceKeys,
  davProps,
  sshKeys,
  docserver,
  replication,
  meter,
  assistant,
  shareSuspension,
  storageVolume,
  fileLocks,
  appPlugins,
  appPluginHost,
  dropFileOrder,
  opsLease,
  shareAppPages,
  loginFailures,
  uploadFinalizeLease,
  linkStreams,
  searchNameTrgm,
  nodeRemovals,
  linkStrikes,
  replicaFailureFrom,
  grantPaths,
  nfsExports,
  textExtracts,
  appStoreConnections,
  storageOcr,
  languagePacks,
  searchMeta,
  appStoreUpdates,
  storeLicences,
  vault,
  tenants,
  rolesPerTenant,
  liveListing,
  searchGinPending,
  storagesPerTenant,
  searchKeys,
  shareTombstonesTenant,
  opsDedupPerTenant,
  platformOperator,
  nodesTenant,
  tenantTombstones,
  assistantVaultTenant,
  replicationDocserverTenant,
  appPluginsPerTenant,
  tenantLogos,
  tenantPurged,
];

export type { Migration } from './types';
