/**
 * The `webdav` storage driver: any RFC 4918 server (rclone serve webdav,
 * Nextcloud, nginx dav, Apache mod_dav). Keys: docs/drivers/webdav.md.
 */
import type { DriverModule } from '../../types';
import { parseWebdavConfig, WEBDAV_FIELDS } from './config';
import { invalidConfig } from '../remote/errors';

export const webdavDriver: DriverModule = {
  descriptor: {
    driver: 'webdav',
    label: 'WebDAV',
    i18n_key: 'storage.driver.webdav',
    capabilities: {
      read: true,
      write: true,
      presign: false,
      multipart: false,
      presigned_multipart: false,
      move: true,
      copy: true,
      walk: false,
      watch: false,
      ranges: true,
      etag: true,
    },
    fields: WEBDAV_FIELDS,
    max_name_bytes: 255,
  },

  validate(config) {
    const parsed = parseWebdavConfig(config);
    return 'problems' in parsed ? parsed.problems : [];
  },

  /** Builds the driver without touching the network; an invalid config is `validation_failed` on its first field. */
  async create(config) {
    const parsed = parseWebdavConfig(config);
    if ('problems' in parsed) throw invalidConfig(parsed.problems);
    // The webdav client loads with the first WebDAV storage, not at boot.
    const { WebdavStorage } = await import('./client');
    return new WebdavStorage(parsed.config);
  },
};
