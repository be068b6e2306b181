/**
 * The built-in drivers, registered by main.ts in this order (the order of
 * `GET /api/admin/storage-drivers`).
 */
import type { DriverModule } from '../types';
import { localDriver } from './local';
import { s3Driver } from './s3';
import { webdavDriver } from './webdav';
import { ftpDriver } from './ftp';
import { smbDriver } from './smb';
import { sftpDriver } from './sftp';

export const builtinDrivers: DriverModule[] = [localDriver, s3Driver, sftpDriver, webdavDriver, ftpDriver, smbDriver];
export { loadPluginDriver, discoverPlugins } from './plugin';
export { volumeProbe, type VolumeProbe, type MountedVolume } from './local';
