/**
 * The document editor's two read paths (spec: Document editor integration):
 *   - the editor descriptor: for a file the caller may open, the document
 *     server's editor config signed HS256 with the shared secret (document
 *     key from the node and its etag, title, file type, document type by the
 *     word/cell/slide lists, edit permission only for editor+ on a writable
 *     storage, the user, the language, the signed fetch URL and the callback
 *     URL);
 *   - the fetch: the signed URL the document server downloads the bytes
 *     from, checked (HMAC over subject and expiry, 1 hour) and resolved to
 *     the current file; every refusal carries and logs its reason (rule 7).
 */
import { systemActor, type Actor } from '../auth';
import type { Catalogue } from '../catalogue';
import type { DocserverEditor } from '../contract';
import { DEFAULT_TENANT } from '../db';
import { AppError, isAppError } from '../errors';
import type { FileService, OpenFile } from '../files';
import { baseName, extOf } from '../lib/paths';
import type { ExternalServices } from './external.service';
import { checkFetch, docKey, signFetch, signJwt, type FetchSubject } from './signing';

/** Rule 3: the editor's file types by document type. */
export const DOC_GROUPS = {
  word: ['doc', 'docx', 'docm', 'dot', 'dotx', 'dotm', 'odt', 'ott', 'rtf', 'txt', 'html', 'htm', 'epub', 'fodt', 'mht', 'xml', 'xps', 'pdf', 'wps'],
  cell: ['xls', 'xlsx', 'xlsm', 'xlt', 'xltx', 'xltm', 'xlsb', 'csv', 'ods', 'ots', 'fods', 'et', 'ett'],
  slide: ['ppt', 'pptx', 'pptm', 'pot', 'potx', 'potm', 'pps', 'ppsx', 'ppsm', 'odp', 'otp', 'fodp', 'dps', 'dpt'],
} as const;
export type DocumentType = keyof typeof DOC_GROUPS;

/** The document type of an extension, or null when the editor does not take it. */
export function documentType(ext: string): DocumentType | null {
  const e = ext.toLowerCase();
  for (const [type, list] of Object.entries(DOC_GROUPS)) if ((list as readonly string[]).includes(e)) return type as DocumentType;
  return null;
}

export interface EditorDeps {
  files: FileService;
  catalogue: Catalogue;
  external: ExternalServices;
  secretKey: Buffer;
  publicUrl: string;
  log: { warn(msg: string): void };
}

/** A refusal of the fetch route: its code and the rule-7 reason (logged and returned in `details.reason`). */
const refuse = (code: 'forbidden' | 'not_found' | 'storage_unavailable', reason: string) => new AppError(code, { reason }, { reason });

export class EditorService {
  /** One-shot probe URLs of the Test button that are waiting for the document server: nonce → reached. */
  private probes = new Map<string, { expires: number; reached: boolean }>();

  constructor(private d: EditorDeps) {}

  /** The base URL the document server uses to reach this service (rule 6). */
  callbackBase(requestBase: string): string {
    return this.d.external.docserver()?.callbackUrl || this.d.publicUrl || requestBase;
  }

  /**
   * The signed editor descriptor for `path`. Not configured → `not_configured`
   * (`docserver: not configured`); an extension the editor does not take →
   * `unsupported_media_type` (415); a file the caller may not read → as the
   * file service decides.
   */
  async descriptor(actor: Actor, path: string, o: { lang: string; requestBase: string }): Promise<DocserverEditor> {
    const ds = this.d.external.docserver();
    if (!ds) throw new AppError('not_configured', { feature: 'docserver' });
    const ext = extOf(baseName(path));
    const type = documentType(ext);
    if (!type) throw new AppError('unsupported_media_type', { ext }, { ext });
    const f = this.d.files.forActor(actor, 'refuse');
    const file = await f.open(path);
    const node = await this.d.catalogue.nodes.get(this.d.catalogue.storageOf(file.place.storage_id), file.place.rel);
    if (!node || node.deleted_at) throw new AppError('not_found', { path });
    const edit = this.mayEdit(actor, path);
    const base = this.callbackBase(o.requestBase);
    const p = actor.kind === 'system' ? null : actor.principal;
    const config = {
      type: 'desktop',
      documentType: type,
      document: {
        fileType: ext.toLowerCase(),
        key: docKey(this.d.secretKey, { node: node.id, tenant_id: node.tenant_id }, file.etag),
        title: file.name,
        url: `${base}/api/files/docserver/fetch?${signFetch(this.d.secretKey, { node: node.id, tenant_id: node.tenant_id })}`,
        permissions: { edit, download: true, print: true, comment: edit, review: edit, fillForms: edit },
      },
      editorConfig: {
        mode: edit ? 'edit' : 'view',
        lang: o.lang,
        callbackUrl: `${base}/api/files/docserver/callback?node=${node.id}`,
        user: p ? { id: String(p.id), name: p.username || p.email } : { id: 'system', name: 'system' },
        customization: { forcesave: edit, autosave: true },
      },
    };
    const token = await signJwt(ds.secret, config);
    return {
      docserver_url: ds.url,
      api_url: `${ds.url}/web-apps/apps/api/documents/api.js`,
      node_id: node.id,
      edit,
      config: { ...config, token },
    };
  }

  /**
   * Edit only for editor+ on a writable storage (the file service's editor
   * check covers level, permission, key verbs, the read-only flag and app
   * locks): a file an app has locked opens for viewing.
   */
  private mayEdit(actor: Actor, path: string): boolean {
    try {
      this.d.files.forActor(actor, 'refuse').target(path, 'editor');
      return true;
    } catch (e) {
      if (isAppError(e)) return false;
      throw e;
    }
  }

  /** Parses and checks a fetch URL's query; the file to stream, or a probe's text. Refusals are logged with their reason. */
  async fetch(q: { node?: number; tenant?: number; probe?: string; exp: number; sig: string }): Promise<{ file: OpenFile } | { probe: string }> {
    const subject: FetchSubject | null =
      q.node !== undefined ? { node: q.node, ...(q.tenant === undefined ? {} : { tenant_id: q.tenant }) } : q.probe !== undefined ? { probe: q.probe } : null;
    try {
      if (!subject) throw refuse('forbidden', 'signature refused: no subject');
      const bad = checkFetch(this.d.secretKey, subject, q.exp, q.sig);
      if (bad) throw refuse('forbidden', bad);
      if ('probe' in subject) {
        const p = this.probes.get(subject.probe);
        if (!p || p.expires < Date.now()) throw refuse('not_found', 'no such probe (used or expired)');
        p.reached = true;
        return { probe: 'filedock document server probe\n' };
      }
      // The node is found in the tenant the URL was signed for (a URL from before tenants were signed: tenant 1).
      const node = await this.d.catalogue.nodes.byId({ tenant_id: subject.tenant_id ?? DEFAULT_TENANT.tenant_id }, subject.node);
      if (!node || node.deleted_at || node.type !== 'file') throw refuse('not_found', 'no catalogue row');
      const sys = this.d.files.forActor(systemActor('docserver.fetch'));
      let file: OpenFile;
      try {
        file = await sys.open({ storage_id: node.storage_id, rel: node.path });
      } catch (e) {
        if (isAppError(e) && e.code === 'not_found') throw refuse('not_found', 'object not on the storage');
        throw refuse('storage_unavailable', `storage could not be opened (${isAppError(e) ? e.code : (e as Error).message})`);
      }
      const read = file.read;
      const log = this.d.log;
      // Reading failures are logged with the rule-7 reason; the serve itself reports them to the client.
      file.read = async (span, signal) => {
        try {
          const s = await read(span, signal);
          s.once('error', (e) => log.warn(`docserver fetch of node ${node.id}: reading failed (${e.message})`));
          return s;
        } catch (e) {
          log.warn(`docserver fetch of node ${node.id}: reading failed (${(e as Error).message})`);
          throw e;
        }
      };
      return { file };
    } catch (e) {
      if (isAppError(e) && typeof e.details?.reason === 'string')
        this.d.log.warn(`docserver fetch refused (${subject ? JSON.stringify(subject) : 'no subject'}): ${e.details.reason}`);
      throw e;
    }
  }

  /** A one-shot probe URL for the Test button (2 minutes); `reached()` tells whether it was fetched. */
  probe(requestBase: string): { url: string; reached: () => boolean; done: () => void } {
    const nonce = randomNonce();
    const now = Date.now();
    for (const [k, v] of this.probes) if (v.expires < now) this.probes.delete(k);
    this.probes.set(nonce, { expires: now + 120_000, reached: false });
    return {
      url: `${this.callbackBase(requestBase)}/api/files/docserver/fetch?${signFetch(this.d.secretKey, { probe: nonce })}`,
      reached: () => this.probes.get(nonce)?.reached ?? false,
      done: () => void this.probes.delete(nonce),
    };
  }
}

const randomNonce = () => globalThis.crypto.randomUUID().replace(/-/g, '');
