/**
 * The commands that mount an NFS export of the gateway: the Linux kernel
 * client, a libnfs URL (Kodi, `nfs-ls`, `nfs-cp`) and macOS. MOUNT and NFS
 * share one port (docs/gateways-nfs.md), so `port` and `mountport` are the
 * same and no portmapper is asked.
 */

export interface MountCommand {
  label: string;
  value: string;
}

/** Single-quoted for a POSIX shell unless it needs no quoting. */
const quoted = (s: string): string => (/^[\w@%+=:,./[\]-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/**
 * The mount commands for `path` (a UI path: `/Media`, `/Box/Films`) on the
 * gateway at `host` (a name or address; IPv6 with or without brackets) and
 * `port`. The mount point is named after the export's last segment.
 */
export function nfsMountCommands(host: string, port: number | string, path: string): MountCommand[] {
  const h = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  const opts = `vers=3,tcp,port=${port},mountport=${port}`;
  const source = quoted(`${h}:${path}`);
  const dir = (path.split('/').filter(Boolean).at(-1) ?? 'filedock').replace(/[^\w.-]+/g, '-');
  return [
    { label: 'Linux', value: `sudo mkdir -p /mnt/${dir} && sudo mount -t nfs -o ${opts} ${source} /mnt/${dir}` },
    { label: 'Kodi / libnfs', value: `nfs://${h}${encodeURI(path)}?nfsport=${port}&mountport=${port}&version=3` },
    { label: 'macOS', value: `mkdir -p ~/${dir} && sudo mount -t nfs -o ${opts} ${source} ~/${dir}` },
  ];
}

/** The gateway's host and port as this browser reaches it, from its listener URL (`nfs://0.0.0.0:2049/`); null without one. */
export function nfsEndpoint(url: string | null, pageHost: string): { host: string; port: string } | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    const local = ['0.0.0.0', '[::]', '127.0.0.1', 'localhost', '[::1]'].includes(u.hostname);
    return { host: local ? pageHost : u.hostname, port: u.port || '2049' };
  } catch {
    return null;
  }
}
