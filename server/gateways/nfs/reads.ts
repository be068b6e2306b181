/**
 * Open files for READ. NFS has no open or close, so each READ would open the
 * file again; instead the file opened for one READ is kept (with the SFTP
 * gateway's block read-ahead) for IDLE_MS and reused by the next READ of the
 * same file as long as its size and time are unchanged (each READ still
 * opens it through the tree: access is checked every time).
 */
import type { OpenFile } from '../../files';
import { ReadHandle } from '../sftp/handles';

const IDLE_MS = 10_000;
const MAX_OPEN = 64;

export class OpenReads {
  private open = new Map<string, { handle: ReadHandle; timer: NodeJS.Timeout }>();

  /** Up to `len` bytes of `file` at `offset`. */
  read(file: OpenFile, offset: number, len: number): Promise<Buffer> {
    const key = `${file.place.storage_id}\0${file.place.rel}\0${file.size}\0${file.mtime}`;
    let hit = this.open.get(key);
    if (hit) clearTimeout(hit.timer);
    else {
      if (this.open.size >= MAX_OPEN) this.drop(this.open.keys().next().value!);
      hit = { handle: new ReadHandle(file), timer: null as unknown as NodeJS.Timeout };
      this.open.set(key, hit);
    }
    hit.timer = setTimeout(() => this.drop(key), IDLE_MS).unref();
    return hit.handle.read(offset, len);
  }

  private drop(key: string): void {
    const hit = this.open.get(key);
    if (!hit) return;
    clearTimeout(hit.timer);
    this.open.delete(key);
    void hit.handle.close();
  }

  /** Closes every open file. */
  close(): void {
    for (const key of [...this.open.keys()]) this.drop(key);
  }
}
