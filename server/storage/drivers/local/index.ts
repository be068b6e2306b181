/**
 * The `local` driver module: a folder on this machine (NFS mounts too).
 * Config: `path` (legacy alias `root`), absolute, created 0755 when missing,
 * never `/`, no `..`.
 */
import { join } from 'node:path';
import type { DriverDescriptor, DriverModule } from '../../types';
import { LocalDriver } from './local.driver';
import { LocalRoot, rootPathIssue } from './local.root';
import { TempJournal } from './local.temps';

export const localDescriptor: DriverDescriptor = {
  driver: 'local',
  label: 'Local folder',
  i18n_key: 'storage.local.label',
  capabilities: {
    read: true,
    write: true,
    presign: false,
    multipart: true,
    presigned_multipart: false,
    move: true,
    copy: true,
    walk: true,
    watch: true,
    ranges: true,
    etag: false,
  },
  fields: [
    {
      key: 'path',
      type: 'string',
      required: true,
      root: true,
      aliases: ['root'],
      label: 'Folder path',
      i18n_key: 'storage.local.path',
      placeholder: '/srv/files',
      help: 'Absolute path of a folder on this machine; created when missing.',
    },
  ],
  max_name_bytes: 255,
};

export const localDriver: DriverModule = {
  descriptor: localDescriptor,
  /** Beyond the generic root guard: the path must be absolute. */
  validate(config) {
    const issue = rootPathIssue(config.path);
    return issue ? [{ field: 'path', message: issue }] : [];
  },
  /** Opens (creating when missing) the root folder; refuses a root whose real path is `/`. Uploads stage in the data dir when they can. */
  async create(config, ctx) {
    const temps = new TempJournal(join(ctx.stateDir, 'temp-dirs'));
    // A server start clears what a killed predecessor left (in the background; it never touches newer files).
    if (ctx.staleBefore !== undefined) void temps.sweepOnce(ctx.staleBefore, String(config.path)).catch(() => undefined);
    return new LocalDriver(await LocalRoot.open(String(config.path)), ctx.stagingDir ?? join(ctx.stateDir, 'staging'), temps);
  },
};

export { LocalDriver } from './local.driver';
export { volumeProbe, type VolumeProbe, type MountedVolume } from './volume';
