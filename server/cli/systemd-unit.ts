/**
 * The hardened systemd unit of a headless install: the one source of the unit
 * text (`service install-systemd` writes it; resources/systemd/filedock.service
 * is its rendering for the documented layout, kept equal by a test).
 * docs/operations.md, "systemd", explains every choice.
 */
import { dirname, isAbsolute, normalize } from 'node:path';
import { UsageError } from './args';

export interface UnitOptions {
  /** Account the service runs as (its group has the same name). */
  user: string;
  /** Absolute data folder (SERVICE_DATA_DIR); the only place the service writes besides granted storages. */
  dataDir: string;
  /** What starts the server, as absolute paths: the bundle's launcher, or node + a checkout's built CLI. */
  exec: { bundleRoot: string } | { node: string; cli: string };
  /** Storage folders to grant: under /home or /root bound in (ProtectHome=tmpfs hides the rest), elsewhere writable. */
  storages: string[];
}

/** The documented layout (docs/updates.md): a bundle in /opt/filedock/server, data in /var/lib/filedock. */
export const DEFAULT_UNIT: UnitOptions = { user: 'filedock', dataDir: '/var/lib/filedock', exec: { bundleRoot: '/opt/filedock/server' }, storages: [] };

export const ENV_FILE = '/etc/filedock/filedock.env';

/**
 * `raw` as it goes into a unit line (trailing slashes dropped), or throws a
 * UsageError naming `what`. Unit lists split on spaces and `%` starts a
 * specifier, so such paths are refused rather than escaped (a quoting mistake
 * there would only show at `systemctl start`).
 */
export function unitPath(raw: string, what: string): string {
  const path = raw.replace(/(.)\/+$/, '$1');
  const problem = !isAbsolute(path)
    ? 'must be an absolute path'
    : /[\s"'\\%;$`]/.test(path) || /[\x00-\x1f]/.test(path)
      ? 'must not contain spaces, quotes, backslashes, %, ;, $ or `'
      : normalize(path) !== path
        ? 'must be a normalized path (no . or .. segments, no double slashes)'
        : path === '/'
          ? 'must not be the root folder'
          : null;
  if (problem) throw new UsageError(`${what} ${problem} (got ${JSON.stringify(raw)})`);
  return path;
}

/** True when ProtectHome= hides the path, so it must be bound in rather than made writable. */
export const underHome = (p: string) => /^\/(home|root|run\/user)(\/|$)/.test(p);
/** The line that makes `p` writable in the sandbox; `optional`: a folder missing at start is skipped, not fatal. */
const writable = (p: string, optional: boolean) => `${underHome(p) ? 'BindPaths' : 'ReadWritePaths'}=${optional ? '-' : ''}${p}`;

/** Renders the unit file text for `o` (every path already passed through unitPath). */
export function renderUnit(o: UnitOptions): string {
  const bundle = 'bundleRoot' in o.exec ? o.exec.bundleRoot : null;
  const execStart = 'bundleRoot' in o.exec ? `${o.exec.bundleRoot}/bin/service serve` : `${o.exec.node} ${o.exec.cli} serve`;
  // "-": a storage folder missing at start (an unmounted NAS) leaves that storage offline, not the service down.
  const grants = o.storages.map((p) => writable(p, true));
  // A checkout or a Node (nvm) under a home folder must be bound in read-only, or ProtectHome= hides what ExecStart runs.
  const runFrom = 'bundleRoot' in o.exec ? [] : [dirname(o.exec.node), o.exec.cli.replace(/\/dist\/server\/cli\.js$/, '')];
  const shown = runFrom.filter(underHome).map((p) => `BindReadOnlyPaths=${p}`);
  const lines = [
    '# Filedock: written by `service install-systemd` (docs/operations.md, "systemd").',
    '# Settings go in the environment file; grant storage folders in a drop-in (`systemctl edit filedock`).',
    '[Unit]',
    'Description=Filedock file hub',
    'After=network-online.target',
    'Wants=network-online.target',
    '',
    '[Service]',
    'Type=simple',
    `User=${o.user}`,
    `Group=${o.user}`,
    // The data folder, not the install: a self-update moves the install aside while the process runs in it.
    `WorkingDirectory=${o.dataDir}`,
    `Environment=SERVICE_DATA_DIR=${o.dataDir}`,
    `EnvironmentFile=-${ENV_FILE}`,
    ...(bundle
      ? [
          '# Puts the previous bundle back if a self-update died between its two moves (docs/updates.md).',
          `ExecStartPre=/bin/sh -c 'r=${bundle}; [ -e "$r" ] || for b in "$r".bak-*; do [ -d "$b" ] && mv "$b" "$r"; break; done'`,
        ]
      : []),
    `ExecStart=${execStart}`,
    'Restart=on-failure',
    'RestartSec=2',
    'UMask=0027',
    '',
    '# Sandbox. The file system is read-only except the data folder and the granted storages.',
    'ProtectSystem=strict',
    writable(o.dataDir, false),
    ...(bundle ? ['# A self-update unpacks the new bundle beside the old one and swaps the two.', `ReadWritePaths=${dirname(bundle)}`] : []),
    '# Home folders are hidden; a storage under /home is bound in with BindPaths=.',
    'ProtectHome=tmpfs',
    ...shown,
    ...grants,
    'PrivateTmp=yes',
    'PrivateDevices=yes',
    'NoNewPrivileges=yes',
    'ProtectKernelTunables=yes',
    'ProtectKernelModules=yes',
    'ProtectKernelLogs=yes',
    'ProtectControlGroups=yes',
    'ProtectClock=yes',
    'ProtectHostname=yes',
    'ProtectProc=invisible',
    '# AF_NETLINK: os.networkInterfaces() (LAN addresses, mDNS).',
    'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK',
    'RestrictNamespaces=yes',
    'RestrictRealtime=yes',
    'RestrictSUIDSGID=yes',
    'LockPersonality=yes',
    'RemoveIPC=yes',
    'CapabilityBoundingSet=',
    'SystemCallArchitectures=native',
    'SystemCallFilter=@system-service',
    'SystemCallErrorNumber=EPERM',
    '# No MemoryDenyWriteExecute=: V8 compiles JavaScript and WebAssembly into memory it then makes executable.',
    '',
    '[Install]',
    'WantedBy=multi-user.target',
  ];
  return lines.join('\n') + '\n';
}
