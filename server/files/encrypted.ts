/**
 * What the file service enforces inside encrypted folders (docs/vault.md, "Every door"), beside who may
 * open them (access.ts): nothing in the clear goes in. Every new name below an encrypted root has the
 * encrypted-name shape; every file's first bytes are an FDV1 header (checked as the bytes pass, never
 * buffered); a copy or move across a root's boundary, or of a folder holding a root, is refused (it would
 * put plaintext in, or leave ciphertext without its keys); server-side editors (text saves, new documents,
 * archive extraction, the document server) are refused. Paths outside encrypted folders pay one Map lookup.
 */
import { open } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { EncryptedRoot, EncryptedRoots, WriteOrigin } from '../catalogue';
import { AppError } from '../errors';
import { guardHeader, HEADER_BYTES, headerProblem, isEncryptedName, notEncrypted } from '../lib/vault-format';
import type { Place } from './access';

/** Writes made by the server from plaintext it produces or reads: never inside an encrypted folder. */
const SERVER_EDITS: ReadonlySet<WriteOrigin> = new Set(['save-text', 'newfile', 'extract', 'docserver']);

export class EncryptedRules {
  constructor(private roots: EncryptedRoots) {}

  rootOf(p: Place): EncryptedRoot | null {
    return this.roots.rootOf(p.storage_id, p.rel);
  }

  /** Refuses (`not_encrypted`) a new item at `p` whose names below its encrypted root are not encrypted names. */
  newPath(p: Place, shown: string): void {
    const root = this.rootOf(p);
    if (!root || p.rel === root.rel) return;
    const below = p.rel.slice(root.rel === '' ? 0 : root.rel.length + 1).split('/');
    if (!below.every(isEncryptedName)) throw notEncrypted(shown, 'a name in an encrypted folder must be encrypted');
  }

  /** Refuses (`encrypted`, 403) a write the server would make from plaintext into an encrypted folder. */
  serverEdit(p: Place, origin: WriteOrigin, shown: string): void {
    if (SERVER_EDITS.has(origin) && this.rootOf(p)) throw new AppError('encrypted', { path: shown });
  }

  /**
   * Refuses (`encrypted`, 409) moving or copying `src` to `dst` across an encrypted folder's boundary, and
   * moving, renaming or copying a folder that holds an encrypted root (its rows name the root's path).
   */
  transfer(src: Place, dst: Place, shown: string): void {
    const a = this.rootOf(src);
    const b = this.rootOf(dst);
    if ((a?.id ?? null) !== (b?.id ?? null) || this.roots.below(src.storage_id, src.rel).length)
      throw new AppError('encrypted', { path: shown, conflict: true });
  }

  /** `body` checked for an FDV1 header as it passes, when `p` is inside an encrypted folder. */
  guard(p: Place, body: Readable, shown: string): Readable {
    const root = this.rootOf(p);
    return root ? guardHeader(body, root.key_version, shown) : body;
  }

  /** Checks the first bytes of a file already staged on this machine (a body handed over as a file). */
  async guardFile(p: Place, file: string, shown: string): Promise<void> {
    const root = this.rootOf(p);
    if (!root) return;
    const fh = await open(file, 'r');
    try {
      const head = Buffer.alloc(HEADER_BYTES);
      const { bytesRead } = await fh.read(head, 0, HEADER_BYTES, 0);
      const problem = headerProblem(head.subarray(0, bytesRead), root.key_version);
      if (problem) throw notEncrypted(shown, problem);
    } finally {
      await fh.close();
    }
  }
}
