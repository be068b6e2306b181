/**
 * Real removable volumes for tests: ext4 images (`truncate` + `mkfs.ext4`)
 * loop-mounted into a private temp dir. Needs root and the loop driver. In CI
 * (`CI=true`) a machine that cannot loop-mount fails the test; elsewhere it
 * skips with the reason. `cleanup()` unmounts everything this instance
 * mounted and detaches the loop devices backing its own images only (other
 * tests may use loop devices too), then removes the dir; call it in `after`.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './tools';

const sh = (file: string, args: string[]) => execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000 }).trim();

export class LoopVolumes {
  readonly dir: string;
  private images: string[] = [];
  private mounted = new Set<string>();
  private removeDir: () => void;

  constructor() {
    const t = tempDir('filedock-volumes-');
    this.dir = t.dir;
    this.removeDir = t.cleanup;
  }

  /**
   * Null when this machine can loop-mount an ext4 image (tried for real), else why not; throws in CI.
   * Cleans up after its own try.
   */
  static unavailable(): string | null {
    let why: string | null = null;
    if (process.platform !== 'linux') why = 'loop-mounted ext4 images need Linux';
    else if (process.getuid?.() !== 0) why = 'loop-mounting needs root';
    if (!why) {
      const v = new LoopVolumes();
      try {
        v.mount(v.image('probe'), v.folder('probe'));
      } catch (e) {
        why = `cannot loop-mount an ext4 image here (${(e as Error).message.split('\n')[0]}); needs util-linux, e2fsprogs and the loop driver`;
      } finally {
        v.cleanup();
      }
    }
    if (why && (process.env.CI === 'true' || process.env.CI === '1')) throw new Error(`[CI] ${why}`);
    return why;
  }

  /** A fresh 16 MiB ext4 image; returns its path. */
  image(name: string): string {
    const img = join(this.dir, `${name}.img`);
    sh('truncate', ['-s', '16M', img]);
    sh('mkfs.ext4', ['-q', '-F', img]);
    this.images.push(img);
    return img;
  }

  /** The filesystem UUID of an image, as blkid reads it. */
  uuid(img: string): string {
    return sh('blkid', ['-s', 'UUID', '-o', 'value', img]);
  }

  /** An empty folder under the private dir (a mount point). */
  folder(name: string): string {
    const p = join(this.dir, name);
    mkdirSync(p, { recursive: true });
    return p;
  }

  mount(img: string, at: string): void {
    sh('mount', ['-o', 'loop', img, at]);
    this.mounted.add(at);
  }

  /** Unmounts (lazily when something still holds it open, as pulling the plug would). */
  unmount(at: string): void {
    try {
      sh('umount', [at]);
    } catch {
      sh('umount', ['-l', at]);
    }
    this.mounted.delete(at);
  }

  cleanup(): void {
    for (const at of [...this.mounted]) {
      try {
        this.unmount(at);
      } catch {
        /* already gone */
      }
    }
    for (const img of this.images) {
      try {
        for (const line of sh('losetup', ['-j', img]).split('\n').filter(Boolean)) sh('losetup', ['-d', line.slice(0, line.indexOf(':'))]);
      } catch {
        /* none left */
      }
    }
    this.removeDir();
  }
}
