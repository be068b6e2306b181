/**
 * The little XML the S3 gateway speaks: documents written from plain values,
 * and the two request bodies it reads (DeleteObjects, CompleteMultipartUpload)
 * parsed by a strict, bounded reader. No DTD, no entity other than the five
 * predefined ones and character references, no processing instruction other
 * than the declaration: a body that has one is MalformedXML, so neither
 * external entities nor entity expansion ("billion laughs") can happen.
 */

/** A value written as element content: text, nested elements, or repeated elements. */
export type XmlValue = string | number | boolean | null | undefined | XmlNode | XmlNode[];
export interface XmlNode {
  [name: string]: XmlValue;
}

export const escapeXml = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);

/** A whole document with root `root`; undefined/null children are left out, arrays repeat the element. */
export function xmlDoc(root: string, body: XmlNode): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<${root}>${children(body)}</${root}>`;
}

function children(node: XmlNode): string {
  let out = '';
  for (const [name, v] of Object.entries(node)) {
    if (v === undefined || v === null) continue;
    for (const item of Array.isArray(v) ? v : [v]) out += typeof item === 'object' ? `<${name}>${children(item)}</${name}>` : `<${name}>${escapeXml(String(item))}</${name}>`;
  }
  return out;
}

/** A parsed element: its name, text (for leaves) and child elements in order. */
export interface XmlElement {
  name: string;
  text: string;
  children: XmlElement[];
}

/** The largest request body read as XML. */
export const MAX_XML_BYTES = 2 * 1024 * 1024;

/** Parses a small XML document; null when it is not well formed or uses anything beyond plain elements. */
export function parseXml(src: string): XmlElement | null {
  if (src.length > MAX_XML_BYTES) return null;
  const text = src.replace(/^\uFEFF/, '').replace(/^\s*<\?xml[^?]*\?>/, '');
  if (/<[!?]/.test(text)) return null; // DOCTYPE, ENTITY, CDATA, comments, PIs: never needed by S3 bodies
  const stack: XmlElement[] = [{ name: '', text: '', children: [] }];
  const tag = /<(\/?)([A-Za-z_][\w.:-]*)((?:\s+[\w.:-]+\s*=\s*(?:"[^"<]*"|'[^'<]*'))*)\s*(\/?)>/g;
  let at = 0;
  for (let m = tag.exec(text); m; m = tag.exec(text)) {
    const between = text.slice(at, m.index);
    if (between.includes('<')) return null;
    const decoded = decodeEntities(between);
    if (decoded === null) return null;
    stack[stack.length - 1].text += decoded;
    at = tag.lastIndex;
    const [, close, qname, , selfClose] = m;
    const name = qname.slice(qname.indexOf(':') + 1);
    if (close) {
      const open = stack.pop()!;
      if (stack.length === 0 || open.name !== name) return null;
      continue;
    }
    const el: XmlElement = { name, text: '', children: [] };
    stack[stack.length - 1].children.push(el);
    if (!selfClose) stack.push(el);
  }
  const rest = text.slice(at);
  if (stack.length !== 1 || rest.trim() !== '' || stack[0].children.length !== 1 || stack[0].text.trim() !== '') return null;
  return stack[0].children[0];
}

/** The child elements of `el` named `name`. */
export const childrenNamed = (el: XmlElement, name: string): XmlElement[] => el.children.filter((c) => c.name === name);

/** The text of the first child named `name` (trimmed), or undefined. */
export const childText = (el: XmlElement, name: string): string | undefined => el.children.find((c) => c.name === name)?.text.trim();

function decodeEntities(s: string): string | null {
  if (/&(?!(?:amp|lt|gt|quot|apos|#\d{1,7}|#x[0-9a-fA-F]{1,6});)/.test(s)) return null; // a bare & or any other entity
  let bad = false;
  const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
  const out = s.replace(/&(#x[0-9a-fA-F]+|#\d+|\w+);/g, (_m, e: string) => {
    if (e in named) return named[e];
    const n = e.startsWith('#x') ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
    if (n < 1 || n > 0x10ffff) bad = true;
    return bad ? '' : String.fromCodePoint(n);
  });
  return bad ? null : out;
}
