/**
 * WebDAV's side of XML: DAV: names and the serialisation of stored values.
 * Request bodies are read by the shared strict reader (server/lib/xml.ts).
 */
import { escapeXml, type XmlElement } from '../../lib/xml';

export const DAV = 'DAV:';

/** The first child named `name` in `ns` (DAV: by default). */
export const child = (el: XmlElement | undefined, name: string, ns = DAV): XmlElement | undefined => el?.children.find((c) => c.name === name && c.ns === ns);

/**
 * An element and its content as a self-contained string: every element
 * declares its own namespace, so the value can be stored alone and written
 * back inside any response (dead property values, lock owners).
 */
export function serialize(el: XmlElement): string {
  const tag = el.ns === '' ? el.name : `x:${el.name}`;
  return `<${tag} ${el.ns === '' ? 'xmlns=""' : `xmlns:x="${escapeXml(el.ns)}"`}>${inner(el)}</${tag}>`;
}

/** An element's content (text and children) as XML. */
export function inner(el: XmlElement): string {
  return escapeXml(el.text) + el.children.map(serialize).join('');
}
