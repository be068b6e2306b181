/**
 * The `ftp` storage driver: FTP, FTPS with explicit TLS (AUTH TLS) or implicit
 * TLS, on any server with Unix-style listings (vsftpd, ProFTPD, Pure-FTPd,
 * most NAS). Keys: docs/drivers/ftp.md.
 */
import type { DriverModule } from '../../types';
import { invalidConfig } from '../remote/errors';
import { FTP_FIELDS, parseFtpConfig } from './config';

export const ftpDriver: DriverModule = {
  descriptor: {
    driver: 'ftp',
    label: 'FTP / FTPS',
    i18n_key: 'storage.driver.ftp',
    capabilities: {
      read: true,
      write: true,
      presign: false,
      multipart: false,
      presigned_multipart: false,
      move: true,
      copy: false,
      walk: false,
      watch: false,
      ranges: true,
      etag: false,
    },
    fields: FTP_FIELDS,
    max_name_bytes: 255,
  },

  validate(config) {
    const parsed = parseFtpConfig(config);
    return 'problems' in parsed ? parsed.problems : [];
  },

  /** Builds the driver without touching the network; an invalid config is `validation_failed` on its first field. */
  async create(config) {
    const parsed = parseFtpConfig(config);
    if ('problems' in parsed) throw invalidConfig(parsed.problems);
    // basic-ftp loads with the first FTP storage, not at boot.
    const { FtpStorage } = await import('./client');
    return new FtpStorage(parsed.config);
  },
};
