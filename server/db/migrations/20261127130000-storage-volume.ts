import { portable } from './kit';

/**
 * The volume under a local storage (owner: catalogue): its identity (filesystem
 * UUID, volume UUID or serial), mount point and the storage's folder below it,
 * as JSON, recorded when the storage is first probed. A removable drive is
 * recognised by it when it comes back, at the same or another mount point.
 */
export const storageVolume = portable('20261127130000-storage-volume', ({ schema: s }) => [s.alterTable('storages').addColumn('volume', 'text')]);
