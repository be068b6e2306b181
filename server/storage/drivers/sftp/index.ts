/**
 * The `sftp` driver module: its descriptor (which drives the admin form,
 * config validation, the root guard and the CLI) and its factory.
 */
import type { DriverDescriptor, DriverModule, StorageDriver } from '../../types';
import { ALIASES, configProblems, DEFAULT_PORT, DEFAULT_TIMEOUT_S, MAX_NAME_BYTES, resolveConfig } from './config';
import type { SftpTuning } from './driver';

const field = (key: string, label: string) => ({ key, label, i18n_key: `storage.sftp.${key}` });

export const sftpDescriptor: DriverDescriptor = {
  driver: 'sftp',
  label: 'SFTP',
  i18n_key: 'storage.sftp.label',
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
  fields: [
    { ...field('host', 'Host'), type: 'string', required: true, placeholder: 'nas.local' },
    { ...field('port', 'Port'), type: 'int', default: DEFAULT_PORT },
    { ...field('user', 'User'), type: 'string', required: true, aliases: ALIASES.user },
    { ...field('password', 'Password'), type: 'password', secret: true, help: 'One of password, private key or key path is required.' },
    { ...field('private_key', 'Private key'), type: 'text', secret: true, placeholder: '-----BEGIN OPENSSH PRIVATE KEY-----' },
    { ...field('key_path', 'Private key file'), type: 'string', placeholder: '/home/me/.ssh/id_ed25519', help: 'Read when the private key is empty.' },
    {
      ...field('root', 'Folder'),
      type: 'string',
      required: true,
      root: true,
      aliases: ALIASES.root,
      placeholder: '/srv/files',
      help: 'A sub-folder, never "/".',
    },
    {
      ...field('known_hosts', 'known_hosts file'),
      type: 'string',
      help: 'Strict checking against this file. Empty: the key is recorded on first connect and a change is refused.',
    },
    { ...field('host_key', 'Pinned host key'), type: 'string', placeholder: 'SHA256:... or ssh-ed25519 AAAA...' },
    { ...field('insecure_skip_host_key', 'Skip host key check (insecure)'), type: 'bool', default: false },
    {
      ...field('timeout', 'Network timeout (seconds)'),
      type: 'int',
      default: DEFAULT_TIMEOUT_S,
      help: 'Longest silence on a request; connecting is bounded at 10 s at most.',
    },
  ],
  max_name_bytes: MAX_NAME_BYTES,
};

/**
 * Builds a driver from a stored config; reads `key_path` (local I/O only, no
 * network: the manager probes). `tuning` is for tests and benchmarks.
 * Throws `validation_failed` for a config `validate` would refuse. ssh2 loads
 * with the first SFTP storage, not at boot.
 */
export async function createSftpDriver(config: Record<string, unknown>, stateDir: string, tuning?: Partial<SftpTuning>): Promise<StorageDriver> {
  const resolved = await resolveConfig(config, stateDir);
  const { SftpDriver } = await import('./driver');
  return new SftpDriver(resolved, tuning);
}

export const sftpDriver: DriverModule = {
  descriptor: sftpDescriptor,
  validate: configProblems,
  create: (config, ctx) => createSftpDriver(config, ctx.stateDir),
};
