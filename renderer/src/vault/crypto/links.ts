/** A public link's key (docs/vault.md, "Links"): the file's content key in the URL fragment, `#k=` + 43 characters of b64u. */
import { b64u, type Bytes, fromB64u } from './bytes';
import { VaultError } from './errors';
import { CONTENT_KEY_BYTES } from './header';

/** `#k=` + b64u(contentKey), to append to a link's URL. */
export function linkFragment(contentKey: Uint8Array): string {
  if (contentKey.length !== CONTENT_KEY_BYTES) throw new VaultError('bad_link_key');
  return `#k=${b64u(contentKey)}`;
}

/** The content key in a location's hash (with or without its `#`); anything but exactly `k=` and 32 bytes of b64u is `bad_link_key`. */
export function parseLinkFragment(hash: string): Bytes {
  const m = /^#?k=([A-Za-z0-9_-]{43})$/.exec(hash);
  const key = m ? fromB64u(m[1]) : null;
  if (!key || key.length !== CONTENT_KEY_BYTES) throw new VaultError('bad_link_key');
  return key;
}
