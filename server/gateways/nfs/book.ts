/**
 * Exports as the gateway serves them: which export a MOUNT path names, which
 * client addresses may use it, whose rights apply (the export's account, or
 * one of its API keys, looked up again at least every FRESH_MS so a disabled
 * account or revoked key stops at once), and what a file handle stands for.
 * A handle is honoured only from an address the export allows, only while
 * its node lives (else STALE) and only inside its export.
 */
import type { BlockList } from 'node:net';
import type { Actor, ActorSpec } from '../../auth';
import { parseAddressList, inList } from '../../lib/net-addr';
import type { GatewayCore, GatewayTree } from '../index';
import { Nfs3, NfsError } from './errors';
import type { NfsExport, NfsExportsRepo } from './exports.repo';
import { exportSpec } from './exports.service';
import type { Handles } from './handles';
import type { Staged, StagedFiles } from './writes';

const FRESH_MS = 1000;

/** A handle resolved: the export, the tree with its account's rights, and the UI path. */
export interface Located {
  exp: NfsExport;
  tree: GatewayTree;
  path: string;
  /** Where the item lives (storage id, path in it). */
  storageId: number;
  rel: string;
  /** The storage's name. */
  storage: string;
  /** The stage of a pending file (made by CREATE, not published yet). */
  pending?: Staged;
  /** The catalogue node the handle named (its fileid without a look-up); absent for roots, pending files and children made from a path. */
  nodeId?: number;
}

interface Known {
  exp: NfsExport;
  clients: BlockList;
  /** Whether an address may use the export, by address (checking a BlockList costs more than a READ's other checks). */
  allowed: Map<string, boolean>;
}

/** The export's account's tree as of `at`, and the export's root in it (looked up once per tree). */
interface Session {
  tree: GatewayTree;
  at: number;
  root?: { storageId: number; rel: string };
}

export class ExportBook {
  private cache: { version: number; list: Known[] } | null = null;
  private trees = new Map<string, Session>();

  constructor(
    private repo: NfsExportsRepo,
    private core: GatewayCore,
    readonly handles: Handles,
    private stages: StagedFiles,
    private restore: (spec: ActorSpec, request: { ip: string; ua: string }) => Promise<Actor>,
  ) {}

  /** The exports with their parsed client lists, read again only after a change (a microtask on SQLite otherwise). */
  private async all() {
    if (this.cache?.version !== this.repo.version) {
      // The version as of before the read: a change committed during it leaves the cache stale, read again next call.
      const version = this.repo.version;
      const list = (await this.repo.among(this.core.nodes.tenants())).map((exp) => ({
        exp,
        clients: parseAddressList(exp.clients).list,
        allowed: new Map<string, boolean>(),
      }));
      this.cache = { version, list };
      this.trees.clear();
      return list;
    }
    return this.cache.list;
  }

  /** The exports `ip` may mount. */
  async mountable(ip: string): Promise<NfsExport[]> {
    return (await this.all()).filter((x) => inList(x.clients, ip)).map((x) => x.exp);
  }

  /**
   * The export a MOUNT path names: the export at that path, or the one whose
   * folder holds it (a client may mount a folder inside an export, as with
   * the kernel's server); the deepest wins. `sub` is the path below the
   * export ('' for the export itself). Null when no export holds it.
   */
  async byPath(path: string): Promise<{ exp: NfsExport; sub: string } | null> {
    const want = trim(path);
    let best: { exp: NfsExport; sub: string; at: string } | null = null;
    for (const { exp } of await this.all()) {
      const at = this.mountPath(exp);
      if (want !== at && !want.startsWith(at + '/')) continue;
      if (!best || at.length > best.at.length) best = { exp, sub: want.slice(at.length + 1), at };
    }
    return best && { exp: best.exp, sub: best.sub };
  }

  /**
   * The path a client mounts `exp` by: its folder's path, under `/t/<slug>` for a tenant other than tenant 1
   * (docs/gateways-nfs.md, "Tenants"), so two tenants' exports of `/Docs` are two mount paths and neither learns
   * of the other's.
   */
  mountPath(exp: NfsExport): string {
    return this.core.tenantBase(exp) + trim(exp.path);
  }

  /** Whether `ip` may use export `exp`. */
  async allows(exp: NfsExport, ip: string): Promise<boolean> {
    return (await this.all()).some((x) => x.exp.id === exp.id && inList(x.clients, ip));
  }

  /** The tree with the export's account's rights now; a gone account or key → ACCES. */
  async tree(exp: NfsExport, ip: string): Promise<GatewayTree> {
    return (await this.session(exp, ip)).tree;
  }

  /** The account's tree for `exp` from `ip`, made again after FRESH_MS. */
  private async session(exp: NfsExport, ip: string): Promise<Session> {
    const key = `${exp.id}\0${ip}`;
    const hit = this.trees.get(key);
    if (hit && Date.now() - hit.at < FRESH_MS) return hit;
    let actor: Actor;
    try {
      actor = await this.restore(exportSpec(exp), { ip, ua: 'nfs' });
    } catch {
      throw new NfsError(Nfs3.ACCES, 'the export account is disabled or its key revoked');
    }
    const made: Session = { tree: this.core.tree(actor, 'nfs'), at: Date.now() };
    this.trees.set(key, made);
    if (this.trees.size > 1000) this.trees.delete(this.trees.keys().next().value!);
    return made;
  }

  /** The export's root: its storage id and path there (throws `not_found` when its storage is gone). */
  root(exp: NfsExport, tree: GatewayTree): { storageId: number; rel: string } {
    const t = tree.files.target(exp.path, 'viewer', { passage: true });
    return { storageId: t.storage.id, rel: t.rel };
  }

  /** The handle of the root of `exp`, or of folder `sub` in it (not a folder → `not_found`). */
  async rootHandle(exp: NfsExport, tree: GatewayTree, sub = ''): Promise<Buffer> {
    const root = this.root(exp, tree);
    if (sub === '') return await this.handleOf(exp, root);
    const rel = root.rel === '' ? sub : `${root.rel}/${sub}`;
    if ((await tree.stat(`${trim(exp.path)}/${sub}`)).type !== 'dir') throw new NfsError(Nfs3.NOTDIR);
    return await this.handleOf(exp, { storageId: root.storageId, rel });
  }

  /**
   * The handle of an item; a pending file's names it until published; an
   * item the catalogue holds no node for is catalogued first (its folder is
   * looked at), else JUKEBOX (the client retries).
   */
  async handleOf(exp: NfsExport, at: { storageId: number; rel: string }): Promise<Buffer> {
    if (at.rel === '') return this.handles.make({ exportId: exp.id, kind: 'storage', id: at.storageId });
    const stage = this.stages.at(at);
    if (stage?.pendingId != null && !stage.sealed) return this.handles.make({ exportId: exp.id, kind: 'pending', id: stage.pendingId });
    const id = await this.core.nodes.idFor(at.storageId, at.rel);
    if (id === null) throw new NfsError(Nfs3.JUKEBOX, 'not catalogued yet');
    return this.handles.make({ exportId: exp.id, kind: 'node', id });
  }

  /** The id NFS shows for an item (fileid): its node id; a storage root gets one above every node id. */
  async fileid(at: { storageId: number; rel: string }): Promise<number> {
    return at.rel === '' ? 2 ** 52 + at.storageId : ((await this.core.nodes.idAt(at.storageId, at.rel)) ?? 0);
  }

  /**
   * What handle `fh` stands for, for a call from `ip`. Forged or altered →
   * BADHANDLE; an export gone or a node deleted or moved out of its export
   * → STALE; an address the export does not allow → ACCES.
   */
  async locate(fh: Buffer, ip: string): Promise<Located> {
    const ref = this.handles.read(fh);
    const known = (await this.all()).find((x) => x.exp.id === ref.exportId);
    if (!known) throw new NfsError(Nfs3.STALE, 'the export is gone');
    const exp = known.exp;
    let allowed = known.allowed.get(ip);
    if (allowed === undefined) {
      if (known.allowed.size >= 1024) known.allowed.clear();
      known.allowed.set(ip, (allowed = inList(known.clients, ip)));
    }
    if (!allowed) throw new NfsError(Nfs3.ACCES, 'this address may not use the export');
    const session = await this.session(exp, ip);
    const tree = session.tree;
    // The root is found again with the tree (every FRESH_MS); the item itself is looked up and checked on each call.
    let root: { storageId: number; rel: string };
    try {
      root = session.root ??= this.root(exp, tree);
    } catch {
      throw new NfsError(Nfs3.STALE, 'the export path is gone');
    }
    let at: { storageId: number; rel: string; storage: string };
    let pending: Staged | undefined;
    if (ref.kind === 'pending') {
      const p = this.stages.pendingById(ref.id);
      const now = p && 'node' in p ? await this.core.nodes.where(exp, p.node) : null;
      if (!p || ('node' in p && !now)) throw new NfsError(Nfs3.STALE);
      if ('stage' in p) pending = p.stage;
      at = 'stage' in p ? p.stage.place : now!;
    } else if (ref.kind === 'storage') {
      const storage = this.core.nodes.storageName(exp, ref.id);
      if (storage === null) throw new NfsError(Nfs3.STALE);
      at = { storageId: ref.id, rel: '', storage };
    } else {
      const p = await this.core.nodes.where(exp, ref.id);
      if (!p) throw new NfsError(Nfs3.STALE);
      at = p;
    }
    const inside = at.storageId === root.storageId && (root.rel === '' || at.rel === root.rel || at.rel.startsWith(root.rel + '/'));
    if (!inside) throw new NfsError(Nfs3.STALE, 'outside its export');
    return {
      exp,
      tree,
      path: at.rel === '' ? `/${at.storage}` : `/${at.storage}/${at.rel}`,
      storageId: at.storageId,
      rel: at.rel,
      storage: at.storage,
      pending,
      nodeId: ref.kind === 'node' ? ref.id : undefined,
    };
  }
}

const trim = (p: string) => '/' + p.split('/').filter(Boolean).join('/');
