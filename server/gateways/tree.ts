/**
 * The tree as a gateway sees it: the file service for one actor plus the
 * virtual root `/`, whose entries are the storages the actor can open (by
 * name; the uid works wherever the name does, spec Storage rule 3). Every
 * call goes through `ActorFiles`, so access, key roots, the write gate
 * (thumbnail, antivirus scan, realtime frame, audit, `file.uploaded` /
 * `file.updated` with `meta.origin` = the protocol), the trash and versions
 * apply exactly as on the web. A move or copy the file service runs as an op
 * (across storages, large copies) is waited for: protocols answer when done.
 */
import type { Readable } from 'node:stream';
import { actorRef, actorTenant, type Actor } from '../auth';
import type { GateNode } from '../catalogue';
import type { TenantScope } from '../db';
import { AppError, type Params } from '../errors';
import type { FileService, FileStat, OpenFile, TransferResult } from '../files';
import type { JobQueue } from '../jobs';
import type { UploadsService } from '../uploads';
import type { Protocol } from './auth';

export type GatewayEntry = FileStat;

/** How long a protocol waits for a move or copy run as an op. */
const TRANSFER_WAIT_MS = 30 * 60_000;

/** How gateways meet encrypted folders (the admin setting `gateways_encrypted_folders`, docs/vault.md). */
export type GatewayEncrypted = 'hidden' | 'ciphertext';

export class GatewayTree {
  /**
   * `encrypted()` is read at each call, so the admin's setting applies to sessions already open: `hidden`,
   * encrypted folders do not exist here; `ciphertext`, their members read the ciphertext names and bytes, and
   * nobody writes. Gateways never decrypt. `live(tenant)` is asked at each call too: a suspended tenant's
   * sessions already open are refused their next verb (`unauthenticated`).
   */
  constructor(
    readonly actor: Actor,
    readonly protocol: Protocol,
    private svc: FileService,
    private queue: JobQueue,
    private uploads: UploadsService,
    private encrypted: () => GatewayEncrypted = () => 'hidden',
    private live: (s: TenantScope) => boolean = () => true,
  ) {}

  /** The file service as this gateway's actor sees it; every verb passes here. */
  get files() {
    if (!this.live(actorTenant(this.actor))) throw new AppError('unauthenticated');
    return this.svc.forActor(this.actor, this.encrypted() === 'ciphertext' ? 'read' : 'hidden');
  }

  /** The entry at a tree path: `/` and storage roots are folders. Missing → `not_found`. */
  async stat(path: string): Promise<GatewayEntry> {
    const files = this.files;
    if (path === '/') return { name: '', type: 'dir', size: 0, mtime: 0 };
    const t = files.target(path, 'viewer', { passage: true });
    if (t.rel === '') return { name: t.storage.name, type: 'dir', size: 0, mtime: Date.parse(t.storage.updated_at) || 0 };
    if (t.passage !== undefined) return { name: t.rel.slice(t.rel.lastIndexOf('/') + 1), type: 'dir', size: 0, mtime: 0 };
    return files.stat(t.place);
  }

  /** The entries of a folder, streamed from the catalogue (with node ids); `/` lists the actor's storages. */
  async *list(path: string): AsyncGenerator<GatewayEntry & { id?: number }> {
    if (path === '/') {
      for (const { storage } of this.files.visible()) yield { name: storage.name, type: 'dir', size: 0, mtime: Date.parse(storage.updated_at) || 0 };
      return;
    }
    yield* this.files.entries(path);
  }

  /** A file for reading by ranges. A folder → `not_found`. */
  open(path: string): Promise<OpenFile> {
    return this.files.open(path);
  }

  /**
   * Writes a whole file atomically (nothing is visible until the bytes are
   * complete; a client gone mid-way leaves nothing and announces nothing).
   * `overwrite: false` and an existing file → `conflict`.
   */
  async write(path: string, body: Readable, o: { size?: number; overwrite?: boolean; signal?: AbortSignal; fromFile?: string } = {}): Promise<GateNode> {
    const files = this.files;
    // The web upload's rules: max_upload_bytes and the owner's quota.
    const m = await this.uploads.metered(this.actor, path.slice(path.lastIndexOf('/') + 1), body, o.size);
    return files.write(path, m.body, {
      size: o.size,
      mime: m.mime,
      overwrite: o.overwrite,
      signal: o.signal,
      origin: this.protocol,
      audit: 'file.upload',
      // A file moved into place (`fromFile`) was not read: no text is kept for the search index.
      body: o.fromFile === undefined ? m.text : undefined,
      fromFile: o.fromFile,
    });
  }

  async mkdir(path: string): Promise<void> {
    await this.files.mkdir(path);
  }

  /** Deletes into the trash (for good where the storage cannot move); per-path errors are thrown. */
  async delete(path: string): Promise<void> {
    await this.files.deleteOne(path);
  }

  /** Moves or renames `from` to exactly `to` (not into it), replacing only with `overwrite`. */
  async move(from: string, to: string, overwrite: boolean): Promise<void> {
    await this.settle(await this.files.move(from, to, overwrite, { exact: true }));
  }

  /** Copies `from` to exactly `to`, replacing only with `overwrite`. */
  async copy(from: string, to: string, overwrite: boolean): Promise<void> {
    await this.settle(await this.files.copy(from, to, overwrite, { exact: true }));
  }

  /** Who is acting, for sessions lists and logs. */
  get who(): string {
    const ref = actorRef(this.actor);
    return ref ? (ref.key_id !== undefined ? `${ref.email} (key ${ref.key_id})` : ref.email) : 'system';
  }

  /** Waits for a transfer run as an op; its failure becomes the call's failure. */
  private async settle(r: TransferResult): Promise<void> {
    if (!('operation_id' in r)) return;
    const end = Date.now() + TRANSFER_WAIT_MS;
    for (;;) {
      const op = await this.queue.get(actorTenant(this.actor), r.operation_id);
      if (!op) throw new AppError('internal', {}, undefined, 'the transfer vanished');
      if (op.status === 'completed') return;
      if (op.status === 'failed' || op.status === 'cancelled') {
        throw new AppError((op.error_code as never) ?? 'internal', (op.error_params ?? {}) as Params, undefined, op.error ?? 'the transfer failed');
      }
      if (Date.now() > end) throw new AppError('internal', {}, undefined, 'the transfer is still running');
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
