/**
 * What every WebDAV method needs about its request: the tree path from the
 * URL (percent-decoded, then `treePath(..., {dots: 'refuse'})`; an encoded
 * slash, backslash or NUL is `bad_path`), hrefs back, the lock key of a path,
 * the XML body (bounded), the `If` header and its evaluation.
 */
import type { ParameterizedContext } from 'koa';
import type { TenantScope } from '../../db';
import { AppError } from '../../errors';
import { etagOf, type FileStat } from '../../files';
import { treePath, type GatewayTree } from '..';
import { DavError } from './errors';
import { parseIf, submittedTokens, type IfList, type LockTable } from './locks';
import { parseXml, type XmlElement } from '../../lib/xml';

export const PREFIX = '/dav';
/** The largest XML body accepted (PROPFIND, PROPPATCH, LOCK). */
export const MAX_XML_BYTES = 1 << 20;

/**
 * `tenant`: the one the host or `/t/<slug>/` prefix selected (the HTTP server's tenant middleware sets it);
 * `tenantBase`: that prefix when the request came through it (the middleware has taken it off `ctx.path`).
 */
export type DavCtx = ParameterizedContext<{ ip: string; loopback: boolean; ua: string; tenant: TenantScope; tenantBase?: string }>;

/** A `/dav/...` URL path (still percent-encoded) → tree path. */
export function pathOf(urlPath: string): string {
  if (urlPath !== PREFIX && !urlPath.startsWith(PREFIX + '/')) throw new DavError(502, 'The destination is not on this WebDAV server.');
  const segs = urlPath
    .slice(PREFIX.length)
    .split('/')
    .map((s) => {
      let d: string;
      try {
        d = decodeURIComponent(s);
      } catch {
        throw new AppError('bad_path', {}, { reason: 'encoding' });
      }
      if (d.includes('/')) throw new AppError('bad_path', {}, { reason: 'encoded_slash' });
      return d;
    });
  return treePath(segs.join('/') || '/', { dots: 'refuse' });
}

/**
 * The tree path a `Destination` (or a tagged `If` resource) names: an absolute
 * URL on this host or an absolute path. Read by hand, not with `URL`, which
 * would resolve an encoded `%2e%2e` before it could be refused.
 */
export function pathOfUrl(raw: string, host: string, base = ''): string {
  const m = /^(?:https?:\/\/([^/?#]+))?(\/[^?#]*)?/i.exec(raw.trim());
  if (!m || !m[2] || (m[1] !== undefined && m[1].toLowerCase() !== host.toLowerCase()))
    throw new DavError(502, 'The destination is not on this WebDAV server.');
  // Under a tenant's prefix the destination must name the same prefix: without it, it is another tenant's tree.
  if (base && !m[2].startsWith(`${base}/`)) throw new DavError(502, 'The destination is not on this WebDAV server.');
  return pathOf(m[2].slice(base.length));
}

/** The href of a tree path (folders end with `/`), under the request's tenant prefix if it came through one. */
export function hrefOf(path: string, dir: boolean, base = ''): string {
  if (path === '/') return `${base}${PREFIX}/`;
  return (
    base +
    PREFIX +
    path
      .split('/')
      .map((s) => encodeURIComponent(s).replace(/%40/g, '@').replace(/'/g, '%27'))
      .join('/') +
    (dir ? '/' : '')
  );
}

/** The parent tree path ('/' for a storage root). */
export const parentPath = (path: string): string => path.slice(0, path.lastIndexOf('/')) || '/';

export class DavRequest {
  readonly path: string;
  /** The tenant prefix the request came through ('' by host or in single-tenant mode): hrefs carry it. */
  readonly base: string;
  private ifLists: IfList[] | null = null;

  constructor(
    readonly ctx: DavCtx,
    readonly tree: GatewayTree,
    readonly locks: LockTable,
  ) {
    this.path = pathOf(ctx.path);
    this.base = ctx.state.tenantBase ?? '';
  }

  /** The lock key of a tree path: its place, so a storage's name and uid are one key. */
  key(path = this.path): string {
    if (path === '/') return '/';
    const t = this.tree.files.target(path, 'viewer', { passage: true });
    return `${t.place.storage_id}:/${t.place.rel}`;
  }

  /** The node at `path`, or null when there is none. */
  async statOrNull(path = this.path): Promise<FileStat | null> {
    try {
      return await this.tree.stat(path);
    } catch (e) {
      if (e instanceof AppError && e.code === 'not_found') return null;
      throw e;
    }
  }

  /** The parent of `path` must be an existing folder (409 otherwise, RFC 4918 §9.3.1, §9.7.1). */
  async needParent(path = this.path): Promise<void> {
    const p = await this.statOrNull(parentPath(path));
    if (!p || p.type !== 'dir') throw new DavError(409, 'The parent folder does not exist.');
  }

  /** The XML body, or null when there is none; bounded by MAX_XML_BYTES (413). */
  async xml(): Promise<XmlElement | null> {
    const declared = Number(this.ctx.get('content-length') || 0);
    if (declared > MAX_XML_BYTES) throw new DavError(413, 'The XML body is too large.');
    const chunks: Buffer[] = [];
    let n = 0;
    for await (const c of this.ctx.req as AsyncIterable<Buffer>) {
      n += c.length;
      if (n > MAX_XML_BYTES) throw new DavError(413, 'The XML body is too large.');
      chunks.push(c);
    }
    const text = Buffer.concat(chunks).toString('utf8');
    return text.trim() === '' ? null : parseXml(text);
  }

  /** The parsed `If` header (empty when absent). */
  ifHeader(): IfList[] {
    return (this.ifLists ??= this.ctx.get('if') ? parseIf(this.ctx.get('if')) : []);
  }

  /** Lock tokens submitted in the `If` header. */
  tokens(): Set<string> {
    return submittedTokens(this.ifHeader());
  }

  /**
   * Evaluates the `If` header (412 when no list holds): a token condition
   * holds when that lock covers the list's resource, an entity tag when it
   * is the resource's current one.
   */
  async checkIf(): Promise<void> {
    const lists = this.ifHeader();
    if (!lists.length) return;
    for (const list of lists) {
      let path: string;
      try {
        path = list.resource ? pathOfUrl(list.resource, this.ctx.host, this.base) : this.path;
      } catch {
        continue;
      }
      const node = await this.statOrNull(path).catch(() => null);
      const key = node || path !== '/' ? this.key(path) : '/';
      const holds = list.conditions.every((c) => {
        const v =
          c.token !== undefined
            ? this.locks.covering(key).some((l) => l.token === c.token)
            : !!node && node.type === 'file' && etagOf(node.size, node.mtime, node.etag) === c.etag;
        return v !== c.not;
      });
      if (holds) return;
    }
    throw new DavError(412, 'The If header does not match.');
  }
}
