/**
 * PROPFIND answers: which properties a request asks for, and each node's
 * `DAV:response` element (live properties from the catalogue entry, dead ones
 * from `DeadProps`, locks from the lock table). A response is built one node
 * at a time so a folder of any size streams.
 */
import { mimeOf } from '../../catalogue';
import { etagOf, type FileStat } from '../../files';
import type { Lock } from './locks';
import type { DeadProp } from './props.repo';
import { escapeXml as esc, type XmlElement } from '../../lib/xml';
import { DAV, child } from './xml';

export type PropRequest = { kind: 'all' } | { kind: 'names' } | { kind: 'some'; props: Array<{ ns: string; name: string }> };

/** Live properties this server computes (never stored; PROPPATCH on them is refused). */
export const LIVE = [
  'resourcetype',
  'displayname',
  'getlastmodified',
  'creationdate',
  'getcontentlength',
  'getcontenttype',
  'getetag',
  'supportedlock',
  'lockdiscovery',
];

/** What a PROPFIND body asks for (an empty body is `allprop`). */
export function propRequest(body: XmlElement | null): PropRequest {
  if (!body) return { kind: 'all' };
  if (body.ns !== DAV || body.name !== 'propfind') throw new PropfindError();
  if (child(body, 'propname')) return { kind: 'names' };
  const prop = child(body, 'prop');
  if (prop) return { kind: 'some', props: prop.children.map((c) => ({ ns: c.ns, name: c.name })) };
  if (child(body, 'allprop')) return { kind: 'all' };
  throw new PropfindError();
}

export class PropfindError extends Error {}

/** A property element with its value (`null`: empty element). */
export function propXml(ns: string, name: string, value: string | null): string {
  const tag = ns === DAV ? `D:${name}` : ns === '' ? name : `x:${name}`;
  const decl = ns === DAV ? '' : ns === '' ? ' xmlns=""' : ` xmlns:x="${esc(ns)}"`;
  return value === null || value === '' ? `<${tag}${decl}/>` : `<${tag}${decl}>${value}</${tag}>`;
}

const SUPPORTED_LOCK =
  '<D:lockentry><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>' +
  '<D:lockentry><D:lockscope><D:shared/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>';

/** One `DAV:activelock`. */
export function activeLock(l: Lock, href: string): string {
  const left = Math.max(0, Math.round((l.expires - Date.now()) / 1000));
  return (
    `<D:activelock><D:locktype><D:write/></D:locktype><D:lockscope><D:${l.scope}/></D:lockscope>` +
    `<D:depth>${l.depth}</D:depth>${l.owner ? `<D:owner>${l.owner}</D:owner>` : ''}<D:timeout>Second-${left}</D:timeout>` +
    `<D:locktoken><D:href>${esc(l.token)}</D:href></D:locktoken><D:lockroot><D:href>${esc(href)}</D:href></D:lockroot></D:activelock>`
  );
}

/** The live properties of an entry, by name (values already XML). */
function live(e: FileStat, locks: Lock[], hrefOf: (l: Lock) => string): Map<string, string> {
  const m = new Map<string, string>();
  const dir = e.type === 'dir';
  m.set('resourcetype', dir ? '<D:collection/>' : '');
  m.set('displayname', esc(e.name));
  const t = new Date(e.mtime || 0);
  m.set('getlastmodified', t.toUTCString());
  m.set('creationdate', t.toISOString());
  if (!dir) {
    m.set('getcontentlength', String(e.size));
    m.set('getcontenttype', esc(e.mime ?? mimeOf(e.name)));
    m.set('getetag', esc(etagOf(e.size, e.mtime, e.etag)));
  }
  m.set('supportedlock', SUPPORTED_LOCK);
  m.set('lockdiscovery', locks.map((l) => activeLock(l, hrefOf(l))).join(''));
  return m;
}

/** One `DAV:response` for a node. */
export function responseXml(href: string, e: FileStat, req: PropRequest, dead: DeadProp[], locks: Lock[], hrefOf: (l: Lock) => string): string {
  const props = live(e, locks, hrefOf);
  const ok: string[] = [];
  const missing: string[] = [];
  if (req.kind === 'names') {
    for (const name of props.keys()) ok.push(propXml(DAV, name, null));
    for (const d of dead) ok.push(propXml(d.ns, d.name, null));
  } else if (req.kind === 'all') {
    for (const [name, value] of props) ok.push(propXml(DAV, name, value));
    for (const d of dead) ok.push(propXml(d.ns, d.name, d.value));
  } else {
    for (const p of req.props) {
      const value = p.ns === DAV ? props.get(p.name) : undefined;
      const d = value === undefined ? dead.find((x) => x.ns === p.ns && x.name === p.name) : undefined;
      if (value !== undefined) ok.push(propXml(DAV, p.name, value));
      else if (d) ok.push(propXml(d.ns, d.name, d.value));
      else missing.push(propXml(p.ns, p.name, null));
    }
  }
  let out = `<D:response><D:href>${esc(href)}</D:href>`;
  if (ok.length || !missing.length) out += `<D:propstat><D:prop>${ok.join('')}</D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat>`;
  if (missing.length) out += `<D:propstat><D:prop>${missing.join('')}</D:prop><D:status>HTTP/1.1 404 Not Found</D:status></D:propstat>`;
  return out + '</D:response>\n';
}

export const MULTISTATUS_OPEN = '<?xml version="1.0" encoding="utf-8"?>\n<D:multistatus xmlns:D="DAV:">\n';
export const MULTISTATUS_CLOSE = '</D:multistatus>\n';
