/**
 * The `s3` driver module: its descriptor (form fields, aliases, the secret,
 * the root-guarded `prefix`), config validation and the factory.
 */
import type { DriverContext, DriverDescriptor, DriverModule, StorageDriver } from '../../types';
import { parseS3Config } from './config';
import { MAX_KEY_BYTES } from './keys';

export const s3Descriptor: DriverDescriptor = {
  driver: 's3',
  label: 'S3-compatible object storage',
  i18n_key: 'storage.driver.s3',
  capabilities: {
    read: true,
    write: true,
    presign: true,
    multipart: true,
    presigned_multipart: true,
    move: true,
    copy: true,
    walk: true,
    watch: false,
    ranges: true,
    etag: true,
  },
  max_name_bytes: MAX_KEY_BYTES,
  fields: [
    { key: 'bucket', type: 'string', required: true, label: 'Bucket', i18n_key: 'storage.s3.bucket', placeholder: 'my-bucket' },
    {
      key: 'prefix',
      type: 'string',
      required: true,
      root: true,
      label: 'Prefix (folder inside the bucket)',
      i18n_key: 'storage.s3.prefix',
      placeholder: 'filedock/team',
      help: 'Must not be empty: a storage never spans a whole bucket.',
    },
    { key: 'region', type: 'string', label: 'Region', i18n_key: 'storage.s3.region', default: 'auto', placeholder: 'auto' },
    {
      key: 'endpoint',
      type: 'string',
      label: 'Endpoint',
      i18n_key: 'storage.s3.endpoint',
      aliases: ['endpoint_url'],
      placeholder: 'https://s3.example.com',
      help: 'Only for S3-compatible stores; leave empty for AWS.',
    },
    {
      key: 'path_style',
      type: 'select',
      label: 'Path-style addressing',
      i18n_key: 'storage.s3.path_style',
      options: ['auto', 'true', 'false'],
      default: 'auto',
      aliases: ['force_path_style'],
      help: 'auto: on when an endpoint is set.',
    },
    {
      key: 'access_key',
      type: 'string',
      label: 'Access key ID',
      i18n_key: 'storage.s3.access_key',
      aliases: ['access_key_id'],
      help: 'Leave both keys empty to use the default credential chain (environment, profile, instance role).',
    },
    { key: 'secret_key', type: 'password', secret: true, label: 'Secret access key', i18n_key: 'storage.s3.secret_key', aliases: ['secret_access_key'] },
    {
      key: 'disable_presign',
      type: 'bool',
      label: 'Stream downloads through the service',
      i18n_key: 'storage.s3.disable_presign',
      default: false,
      help: 'Off: browsers download straight from the store by presigned URLs.',
    },
  ],
};

export const s3Driver: DriverModule = {
  descriptor: s3Descriptor,
  /** Bucket required, prefix non-empty (the root guard), endpoint a URL, keys in pairs. */
  validate: (config) => parseS3Config(config).problems,
  /** No network here: the manager probes with `stat('')`. */
  // The AWS SDK loads with the first s3 storage, not at boot (idle memory, cold start).
  create: async (config: Record<string, unknown>, ctx: DriverContext): Promise<StorageDriver> =>
    (await import('./factory')).createS3Driver(config, undefined, ctx.countRequest),
};

export type { S3Driver } from './s3.driver';
export type { S3Tuning } from './client';
