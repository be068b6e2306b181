/**
 * Whether a local root sits on a block-device filesystem of this machine,
 * decided once when the storage is mounted (statfs): there, closing a file
 * opened read-only writes nothing back and cannot wait on a server, so a
 * small download may close it synchronously (~2 µs) instead of paying a
 * thread-pool round trip (20–45 µs of main-thread time on a busy 2-core
 * machine). A network share (NFS, SMB, 9p), a FUSE mount (sshfs, rclone,
 * ntfs-3g) or any type not listed keeps the asynchronous close: its close
 * may flush or talk to a daemon.
 */
import { promises as fsp } from 'node:fs';

/** statfs `f_type` magic numbers (linux/magic.h) of filesystems whose read-only close stays in the kernel. */
const LOCAL_TYPES = new Set([
  0xef53, // ext2/3/4
  0x58465342, // xfs
  0x9123683e, // btrfs
  0xf2f52010, // f2fs
  0x2fc12fc1, // zfs
  0xca451a4e, // bcachefs
  0x01021994, // tmpfs
  0x794c7630, // overlayfs (containers)
]);

export interface RootDisk {
  /** The root's device: a file on another one sits on a filesystem mounted below the root, whose kind is unknown. */
  dev: number;
  /** The root's filesystem is one of LOCAL_TYPES (Linux only; false elsewhere or when statfs fails). */
  local: boolean;
}

/** The disk facts of the real root folder `real`. Never throws: unknown means "not local". */
export async function rootDisk(real: string): Promise<RootDisk> {
  const [st, fs] = await Promise.all([fsp.stat(real).catch(() => null), process.platform === 'linux' ? fsp.statfs(real).catch(() => null) : null]);
  return { dev: st?.dev ?? -1, local: !!st && !!fs && LOCAL_TYPES.has(fs.type) };
}
