/**
 * The fragment of a link to an encrypted file (docs/vault.md, "Links"):
 * `#k=<b64u content key>&n=<b64u of the UTF-8 name>` (the first half is the crypto module's `linkFragment`). Browsers never
 * send a fragment to a server, so the key and the true name (the server knows
 * only its ciphertext) reach the visitor's page and nobody else. Pure string
 * work: the key's own checks are the crypto module's (`parseLinkFragment`).
 */

const b64u = (bytes: Uint8Array): string => {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
};

/** The UTF-8 text of a b64u string; '' when it is not base64url or not UTF-8. */
const textOf = (s: string): string => {
  try {
    const bin = atob(s.replace(/-/g, '+').replace(/_/g, '/'));
    return new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(bin, (c) => c.charCodeAt(0)));
  } catch {
    return '';
  }
};

/** `#k=…&n=…` from the key's fragment (`linkFragment`: `#k=…`) and the file's name. */
export const linkHash = (keyFragment: string, name: string): string => `${keyFragment}&n=${b64u(new TextEncoder().encode(name))}`;

/**
 * A page's `location.hash` split: the key part as `parseLinkFragment` reads it (`k=…`; null when the
 * link carries no key at all) and the name ('' when absent or unreadable).
 */
export function splitLinkHash(hash: string): { key: string | null; name: string } {
  const params = new URLSearchParams(hash.replace(/^#/, ''));
  const k = params.get('k');
  return { key: k ? `k=${k}` : null, name: textOf(params.get('n') ?? '') };
}
