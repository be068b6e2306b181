/**
 * Which volume (disk, partition, stick) holds a local folder, by an identity
 * that survives unplugging and a different mount point: the filesystem UUID
 * on Linux (`findmnt`), the volume UUID on macOS (`diskutil`), the volume
 * serial number on Windows (`Win32_Volume`). Only the Linux probe is exercised
 * by the tests (loop-mounted ext4 images); the other two are isolated below
 * and documented in docs/desktop.md, "Removable drives".
 */
import { execFile } from 'node:child_process';
import { posix, win32 } from 'node:path';

/** The volume under a path, as the OS reports it now. */
export interface MountedVolume {
  /** The identity (filesystem UUID, volume UUID or serial); null when the filesystem has none (tmpfs, overlay, a network share). */
  id: string | null;
  /** Where the volume is mounted: a mount point, or a drive root such as `E:\`. */
  mount: string;
  /** Device or source, for messages only (`/dev/sdb1`, `disk4s1`, `\\?\Volume{…}\`). */
  source: string;
}

export interface VolumeProbe {
  /** Where identities come from, for messages and the admin view. */
  readonly kind: 'fs-uuid' | 'volume-uuid' | 'volume-serial';
  /** The volume holding `path`, an existing absolute folder. Throws when the OS tool fails. */
  at(path: string): Promise<MountedVolume>;
  /** Every place the volume `id` is mounted right now (none while it is unplugged). */
  mountsOf(id: string): Promise<MountedVolume[]>;
  /** `path` relative to `mount`, with `/` separators ('' = the mount itself). */
  relative(mount: string, path: string): string;
  /** The folder `sub` (as `relative` gave it) below `mount`. */
  join(mount: string, sub: string): string;
}

const TOOL_TIMEOUT_MS = 5_000;

/** Runs an OS tool without a shell; resolves with its stdout. */
function run(file: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout: TOOL_TIMEOUT_MS, maxBuffer: 4 << 20, windowsHide: true }, (err, stdout) => (err ? reject(err) : resolve(stdout)));
  });
}

const sameId = (a: string | null, b: string) => a !== null && a.toLowerCase() === b.toLowerCase();

/** Linux: `findmnt` (util-linux) reads the mount table and probes each device's UUID; /dev/disk/by-uuid is not needed. */
export const linuxProbe: VolumeProbe = {
  kind: 'fs-uuid',
  async at(path) {
    const fs = parseFindmnt(await run('findmnt', ['-J', '-o', 'UUID,TARGET,SOURCE', '--target', path]));
    if (!fs.length) throw new Error(`findmnt found no mount holding ${path}`);
    return fs[0];
  },
  async mountsOf(id) {
    return parseFindmnt(await run('findmnt', ['-J', '-l', '-o', 'UUID,TARGET,SOURCE'])).filter((m) => sameId(m.id, id));
  },
  relative: (mount, path) => posix.relative(mount, path),
  join: (mount, sub) => (sub ? posix.join(mount, sub) : mount),
};

/** `findmnt -J` output (nested with `--target`, flat with `-l`) as a flat list. */
export function parseFindmnt(out: string): MountedVolume[] {
  type Fs = { uuid?: string | null; target?: string; source?: string; children?: Fs[] };
  const flat: MountedVolume[] = [];
  const visit = (list: Fs[] | undefined) => {
    for (const f of list ?? []) {
      if (f.target) flat.push({ id: f.uuid || null, mount: f.target, source: f.source ?? '' });
      visit(f.children);
    }
  };
  visit((JSON.parse(out || '{}') as { filesystems?: Fs[] }).filesystems);
  return flat;
}

/** macOS: `diskutil info -plist` takes a path or a volume UUID and names the volume's UUID and mount point. */
export const macProbe: VolumeProbe = {
  kind: 'volume-uuid',
  async at(path) {
    const p = plistStrings(await run('diskutil', ['info', '-plist', path]));
    if (!p.MountPoint) throw new Error(`diskutil found no volume holding ${path}`);
    return { id: p.VolumeUUID || null, mount: p.MountPoint, source: p.DeviceIdentifier ?? '' };
  },
  async mountsOf(id) {
    // An unplugged volume is unknown to diskutil (non-zero exit); a known but unmounted one has no mount point.
    const p = await run('diskutil', ['info', '-plist', id]).then(plistStrings, () => ({}) as Record<string, string>);
    return p.MountPoint && sameId(p.VolumeUUID ?? null, id) ? [{ id: p.VolumeUUID, mount: p.MountPoint, source: p.DeviceIdentifier ?? '' }] : [];
  },
  relative: (mount, path) => posix.relative(mount, path),
  join: (mount, sub) => (sub ? posix.join(mount, sub) : mount),
};

/** The `<key>K</key><string>V</string>` pairs of a plist. */
export function plistStrings(xml: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of xml.matchAll(/<key>([^<]+)<\/key>\s*<string>([^<]*)<\/string>/g)) out[m[1]] = m[2];
  return out;
}

/**
 * Windows: every volume with its mount paths (drive letters and folder mounts) and serial number from
 * `Win32_Volume`; the path's volume is the one whose mount path is its longest prefix.
 */
export const windowsProbe: VolumeProbe = {
  kind: 'volume-serial',
  async at(path) {
    const target = win32.resolve(path).toLowerCase();
    const hit = (await windowsVolumes())
      .filter((v) => target === v.mount.toLowerCase().replace(/\\$/, '') || target.startsWith(v.mount.toLowerCase()))
      .sort((a, b) => b.mount.length - a.mount.length)[0];
    if (!hit) throw new Error(`no volume holds ${path}`);
    return hit;
  },
  async mountsOf(id) {
    return (await windowsVolumes()).filter((v) => sameId(v.id, id));
  },
  relative: (mount, path) => win32.relative(mount, path).split(win32.sep).join('/'),
  join: (mount, sub) => (sub ? win32.join(mount, ...sub.split('/')) : mount),
};

async function windowsVolumes(): Promise<MountedVolume[]> {
  const out = await run('powershell.exe', [
    '-NoProfile',
    '-NonInteractive',
    '-Command',
    'Get-CimInstance Win32_Volume | Select-Object Name,SerialNumber,DeviceID | ConvertTo-Json -Compress',
  ]);
  const rows = JSON.parse(out || '[]') as Array<{ Name?: string; SerialNumber?: number | null; DeviceID?: string }> | { Name?: string };
  return (Array.isArray(rows) ? rows : [rows])
    .filter((r): r is { Name: string; SerialNumber?: number | null; DeviceID?: string } => typeof r.Name === 'string' && r.Name !== '')
    .map((r) => ({
      id: r.SerialNumber == null ? null : (r.SerialNumber >>> 0).toString(16).toUpperCase().padStart(8, '0'),
      mount: r.Name,
      source: r.DeviceID ?? '',
    }));
}

/** The probe of this OS, or null where volumes are not tracked. */
export function volumeProbe(platform: NodeJS.Platform = process.platform): VolumeProbe | null {
  return platform === 'linux' ? linuxProbe : platform === 'darwin' ? macProbe : platform === 'win32' ? windowsProbe : null;
}
