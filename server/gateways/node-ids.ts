/**
 * Catalogue node ids for gateway paths and back, for protocols whose clients
 * hold an id instead of a path (NFS file handles). A node keeps its id across
 * renames and moves within its storage; a deleted node has none.
 */
import type { Catalogue } from '../catalogue';
import type { TenantScope } from '../db';

export interface NodePlace {
  storageId: number;
  /** The storage's name now (a renamed storage keeps its ids). */
  storage: string;
  /** Path in the storage ('' is its root). */
  rel: string;
  type: 'file' | 'dir';
}

export class NodeIds {
  constructor(private catalogue: Catalogue) {}

  /** The live node at `rel` of a storage, or null when the catalogue holds none. */
  async idAt(storageId: number, rel: string): Promise<number | null> {
    const n = await this.catalogue.nodes.get(this.catalogue.storageOf(storageId), rel);
    return n && !n.deleted_at ? n.id : null;
  }

  /**
   * The node at `rel`, cataloguing its folder first when the catalogue holds
   * none yet (an item made on the disk since the last sync); null when the
   * item is not there after all, or the look took longer than `waitMs`.
   */
  async idFor(storageId: number, rel: string, waitMs = 5000): Promise<number | null> {
    const known = await this.idAt(storageId, rel);
    if (known !== null || rel === '') return known;
    const parent = rel.includes('/') ? rel.slice(0, rel.lastIndexOf('/')) : '';
    await this.catalogue.syncer.revalidate(storageId, parent, waitMs, 0).catch(() => undefined);
    return await this.idAt(storageId, rel);
  }

  /** Where node `id` of tenant `s` (an NFS export's) is now; null when it is unknown, deleted or another tenant's. */
  async where(s: TenantScope, id: number): Promise<NodePlace | null> {
    const n = await this.catalogue.nodes.byId(s, id);
    if (!n || n.deleted_at) return null;
    const storage = this.storageName(s, n.storage_id);
    return storage === null ? null : { storageId: n.storage_id, storage, rel: n.path, type: n.type === 'dir' ? 'dir' : 'file' };
  }

  /** The name of tenant `s`'s storage `id`, or null when it is gone (or another tenant's). */
  storageName(s: TenantScope, id: number): string | null {
    return this.catalogue.repo.byId(s, id)?.name ?? null;
  }

  /** The tenants that have a storage (every one whose exports can serve anything); no query. */
  tenants(): TenantScope[] {
    return this.catalogue.repo.tenants();
  }
}
