/**
 * The little XML the S3 gateway speaks: documents written from plain values,
 * and the two request bodies it reads (DeleteObjects, CompleteMultipartUpload)
 * parsed by the shared strict reader (server/lib/xml.ts): no DTD, no entity
 * other than the five predefined ones and character references, so neither
 * external entities nor entity expansion ("billion laughs") can happen; what
 * it refuses is MalformedXML here.
 */
import { escapeXml, parseXml as readXml, XmlError, type XmlElement } from '../../lib/xml';

/** A value written as element content: text, nested elements, or repeated elements. */
export type XmlValue = string | number | boolean | null | undefined | XmlNode | XmlNode[];
export interface XmlNode {
  [name: string]: XmlValue;
}

/** A whole document with root `root`; undefined/null children are left out, arrays repeat the element. */
export function xmlDoc(root: string, body: XmlNode): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<${root}>${children(body)}</${root}>`;
}

function children(node: XmlNode): string {
  let out = '';
  for (const [name, v] of Object.entries(node)) {
    if (v === undefined || v === null) continue;
    for (const item of Array.isArray(v) ? v : [v])
      out += typeof item === 'object' ? `<${name}>${children(item)}</${name}>` : `<${name}>${escapeXml(String(item))}</${name}>`;
  }
  return out;
}

/** The largest request body read as XML. */
export const MAX_XML_BYTES = 2 * 1024 * 1024;

/** Parses a request body; null when it is too large or the reader refuses it. Elements are matched by local name. */
export function parseXml(src: string): XmlElement | null {
  if (src.length > MAX_XML_BYTES) return null;
  try {
    return readXml(src);
  } catch (e) {
    if (e instanceof XmlError) return null;
    throw e;
  }
}

/** The child elements of `el` named `name`. */
export const childrenNamed = (el: XmlElement, name: string): XmlElement[] => el.children.filter((c) => c.name === name);

/** The text of the first child named `name` (trimmed), or undefined. */
export const childText = (el: XmlElement, name: string): string | undefined => el.children.find((c) => c.name === name)?.text.trim();
