/**
 * Maps the validated Config onto the updater's plain options, so the
 * composition root only adds what it owns (database snapshot, event bus, log,
 * restart).
 */
import type { Config } from '../config';
import { bundleRootOf } from './bundle-port';
import { resolvePolicy } from './policy';
import type { UpdaterOptions } from './types';

export type ConfigDerivedOptions = Omit<UpdaterOptions, 'snapshotDb' | 'emit' | 'log' | 'restart' | 'port' | 'now'>;

/** The Config's update keys; `installRoot` is found from the running Node binary (null outside a bundle). */
export function updaterOptionsFromConfig(config: Config, execPath = process.execPath): ConfigDerivedOptions {
  return {
    version: config.version,
    dataDir: config.dataDirResolved,
    check: config.updateCheck,
    channel: config.updateChannel,
    manifestUrl: config.updateManifestUrl,
    intervalMs: config.updateInterval,
    policy: resolvePolicy(config.updatePolicy, config.autoUpgrade),
    window: config.updateWindow,
    preCommand: config.updatePreCommand,
    installMode: config.installMode,
    installRoot: bundleRootOf(execPath) ?? undefined,
    os: process.platform,
    arch: process.arch,
  };
}
