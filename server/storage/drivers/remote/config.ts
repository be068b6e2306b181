/**
 * The config keys every network driver (webdav, ftp) shares — the storage
 * root, the call timeout and the TLS trust — as descriptor fields and as one
 * parser, so each driver's config file only states its own keys.
 */
import type { DriverField } from '../../types';
import { DEFAULT_TIMEOUT_S, remoteRoot, str, timeoutMs, tlsTrust, withAliases, type Config, type Problem, type TlsTrust } from './options';

/** What the shared keys parse to. */
export interface RemoteCommon {
  /** Absolute (`/a/b`) or relative (`a/b`) root, never the server root; see `remoteRoot`. */
  root: string;
  trust: TlsTrust;
  timeoutMs: number;
}

/**
 * The `root` field of `driver`, with the aliases every network driver accepts.
 * `placeholder` and `help` differ because the drivers read relative roots differently.
 */
export function rootField(driver: string, placeholder: string, help: string): DriverField {
  return {
    key: 'root',
    type: 'string',
    required: true,
    root: true,
    label: 'Folder',
    i18n_key: `storage.${driver}.root`,
    placeholder,
    aliases: ['base_path', 'remote_path'],
    help,
  };
}

/** The TLS trust and timeout fields of `driver`, in the order the admin form shows them. */
export function trustFields(driver: string): DriverField[] {
  return [
    {
      key: 'tls_fingerprint',
      type: 'string',
      label: 'Pinned certificate (SHA-256)',
      i18n_key: `storage.${driver}.tls_fingerprint`,
      placeholder: 'AB:CD:…',
      help: 'Trust exactly this certificate instead of the system authorities.',
    },
    {
      key: 'allow_self_signed',
      type: 'bool',
      default: false,
      label: 'Accept any self-signed certificate',
      i18n_key: `storage.${driver}.allow_self_signed`,
      help: 'Insecure: prefer pinning the fingerprint.',
    },
    { key: 'timeout_s', type: 'int', default: DEFAULT_TIMEOUT_S, label: 'Timeout (seconds)', i18n_key: `storage.${driver}.timeout_s` },
  ];
}

/**
 * Reads a network driver's config: resolves the aliases of `fields`, parses
 * the shared keys, and lets `own` read the driver's keys from the resolved
 * config, pushing its problems. Every problem is listed, not just the first;
 * `own` returns undefined exactly when it pushed one.
 */
export function parseRemoteConfig<T>(
  input: Config,
  fields: DriverField[],
  own: (config: Config, problems: Problem[]) => T | undefined,
): { config: T & RemoteCommon } | { problems: Problem[] } {
  const c = withAliases(input, fields);
  const problems: Problem[] = [];
  const mine = own(c, problems);
  const root = remoteRoot(str(c, 'root'));
  if ('problem' in root) problems.push({ field: 'root', message: root.problem });
  const timeout = timeoutMs(c);
  if ('problem' in timeout) problems.push({ field: 'timeout_s', message: timeout.problem });
  const trust = tlsTrust(c);
  if ('problem' in trust) problems.push(trust.problem);
  if (problems.length > 0 || mine === undefined || 'problem' in root || 'problem' in timeout || 'problem' in trust) return { problems };
  return { config: { ...mine, root: root.root, trust: trust.trust, timeoutMs: timeout.ms } };
}
