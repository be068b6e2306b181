/**
 * The one strict XML reader for request bodies (the WebDAV gateway's
 * PROPFIND, PROPPATCH and LOCK; the S3 gateway's DeleteObjects and
 * CompleteMultipartUpload) and the escaping used to write answers. Written
 * here rather than taken from a general parser so that what it refuses is
 * plain: any DOCTYPE (hence no entity declarations, no external entities, no
 * billion laughs), nesting deeper than MAX_DEPTH, more than MAX_NODES
 * elements, and anything malformed; each refusal is `XmlError` (each gateway
 * answers it in its own dialect). Only the five predefined entities and
 * character references are expanded; comments, CDATA and processing
 * instructions are read. Names are resolved to (namespace, local name) pairs.
 * Body size limits are the callers'.
 */

export class XmlError extends Error {}

export interface XmlElement {
  ns: string;
  name: string;
  children: XmlElement[];
  /** The element's own text (CDATA included), children's text excluded. */
  text: string;
}

const MAX_DEPTH = 64;
const MAX_NODES = 10_000;
const NAME = /^[A-Za-z_][\w.\-]*(:[A-Za-z_][\w.\-]*)?$/;
const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** Parses a whole document; throws `XmlError` for anything it will not read. */
export function parseXml(src: string): XmlElement {
  let i = 0;
  let nodes = 0;
  let root: XmlElement | null = null;
  const stack: Array<{ el: XmlElement; qname: string; scope: Map<string, string> }> = [];

  const decode = (s: string): string =>
    s.replace(/&(#x[0-9a-fA-F]+|#\d+|\w+);?/g, (m, ref: string) => {
      if (!m.endsWith(';')) throw new XmlError('bad entity reference');
      if (ref[0] === '#') {
        const cp = ref[1] === 'x' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
        if (!(cp > 0 && cp <= 0x10ffff)) throw new XmlError('bad character reference');
        return String.fromCodePoint(cp);
      }
      const v = ENTITIES[ref];
      if (v === undefined) throw new XmlError(`undeclared entity &${ref};`);
      return v;
    });

  const resolve = (qname: string, scope: Map<string, string>, isAttr: boolean): { ns: string; name: string } => {
    const c = qname.indexOf(':');
    if (c < 0) return { ns: isAttr ? '' : (scope.get('') ?? ''), name: qname };
    const ns = scope.get(qname.slice(0, c));
    if (ns === undefined) throw new XmlError(`unbound prefix in ${qname}`);
    return { ns, name: qname.slice(c + 1) };
  };

  while (i < src.length) {
    const lt = src.indexOf('<', i);
    const text = src.slice(i, lt < 0 ? src.length : lt);
    if (text.trim() !== '') {
      if (!stack.length) throw new XmlError('text outside the root element');
      stack[stack.length - 1].el.text += decode(text);
    }
    if (lt < 0) break;
    if (src.startsWith('<?', lt)) {
      const end = src.indexOf('?>', lt);
      if (end < 0) throw new XmlError('unterminated processing instruction');
      i = end + 2;
    } else if (src.startsWith('<!--', lt)) {
      const end = src.indexOf('-->', lt);
      if (end < 0) throw new XmlError('unterminated comment');
      i = end + 3;
    } else if (src.startsWith('<![CDATA[', lt)) {
      const end = src.indexOf(']]>', lt);
      if (end < 0 || !stack.length) throw new XmlError('bad CDATA section');
      stack[stack.length - 1].el.text += src.slice(lt + 9, end);
      i = end + 3;
    } else if (src.startsWith('<!', lt)) {
      throw new XmlError('document type declarations are not accepted');
    } else if (src[lt + 1] === '/') {
      const end = src.indexOf('>', lt);
      const qname = src.slice(lt + 2, end).trim();
      const top = stack.pop();
      if (end < 0 || !top || top.qname !== qname) throw new XmlError('mismatched end tag');
      i = end + 1;
    } else {
      const end = findTagEnd(src, lt);
      let body = src.slice(lt + 1, end);
      const selfClosing = body.endsWith('/');
      if (selfClosing) body = body.slice(0, -1);
      const m = /^([^\s]+)\s*([\s\S]*)$/.exec(body);
      if (!m || !NAME.test(m[1])) throw new XmlError('bad element name');
      const parentScope = stack.length ? stack[stack.length - 1].scope : new Map([['xml', 'http://www.w3.org/XML/1998/namespace']]);
      const scope = new Map(parentScope);
      const attrRe = /([^\s=]+)\s*=\s*("([^"]*)"|'([^']*)')\s*/y;
      let rest = m[2];
      while (rest.length) {
        attrRe.lastIndex = 0;
        const a = attrRe.exec(rest);
        if (!a) throw new XmlError('bad attribute');
        const value = decode(a[3] ?? a[4]);
        if (a[1] === 'xmlns') scope.set('', value);
        else if (a[1].startsWith('xmlns:')) {
          if (value === '') throw new XmlError(`a prefix may not be bound to no namespace (${a[1]})`);
          scope.set(a[1].slice(6), value);
        }
        rest = rest.slice(attrRe.lastIndex);
      }
      if (++nodes > MAX_NODES || stack.length >= MAX_DEPTH) throw new XmlError('document too large or too deep');
      const el: XmlElement = { ...resolve(m[1], scope, false), children: [], text: '' };
      if (stack.length) stack[stack.length - 1].el.children.push(el);
      else if (root) throw new XmlError('more than one root element');
      else root = el;
      if (!selfClosing) stack.push({ el, qname: m[1], scope });
      i = end + 1;
    }
  }
  if (!root || stack.length) throw new XmlError('incomplete document');
  return root;
}

/** The index of the `>` ending the start tag at `lt`, skipping quoted attribute values. */
function findTagEnd(src: string, lt: number): number {
  let q: string | null = null;
  for (let j = lt + 1; j < src.length; j++) {
    const c = src[j];
    if (q) {
      if (c === q) q = null;
    } else if (c === '"' || c === "'") q = c;
    else if (c === '>') return j;
    else if (c === '<') break;
  }
  throw new XmlError('unterminated tag');
}

/** Text and attribute values escaped for XML. */
export const escapeXml = (s: string): string => s.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!);
