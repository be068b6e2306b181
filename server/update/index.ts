/**
 * Releases and self-update (spec, Versioning). Public face of the module:
 * the composition root builds one updater; the admin routes call
 * status/check/apply; the CLI calls selfUpdateCli.
 */
export { createUpdater } from './updater';
export { selfUpdateCli, type SelfUpdateCliDeps } from './cli';
export { updaterOptionsFromConfig, type ConfigDerivedOptions } from './config-options';
export { bundleRootOf } from './bundle-port';
export { parseManifest, ManifestError, type Manifest, type Release, type Asset } from './manifest';
export { resolvePolicy, type UpdatePolicy, type AutoBlock } from './policy';
export type { UpdaterPort, InstallTarget, InstallContext, InstallOutcome, InstallPhase } from './port';
export type { Updater, UpdaterOptions, UpdateStatus, UpdateResult, ReleaseSummary, InstallMode, UpdateEvents, UpdateLog } from './types';
