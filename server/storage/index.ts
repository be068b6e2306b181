/**
 * The storage module's public face: the driver contract, the registry of
 * driver modules, config resolution and secrets, and the driver manager.
 */
export type * from './types';
export { DriverRegistry } from './registry';
export { DriverManager, PROBE_TIMEOUT_MS, type ProbeResult, type StorageId, type StorageSpec, type ManagerOptions } from './manager';
export {
  MASK,
  canonicalKeys,
  resolveConfig,
  rootIssue,
  sealSecrets,
  openSecrets,
  maskSecrets,
  mergeForUpdate,
  type StorageConfig,
  type ConfigProblem,
  type ResolvedConfig,
} from './config';
export { builtinDrivers, discoverPlugins, loadPluginDriver, volumeProbe, type VolumeProbe, type MountedVolume } from './drivers';
export { metered, type RequestClass, type RequestSink } from './meter';
