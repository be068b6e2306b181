/**
 * Builds (and signs) app packages for tests, through the project's own ZIP
 * writer and the package module's digest text, so a test changes exactly one
 * thing (a file after signing, the key, a manifest field) and sees it refused.
 */
import { PassThrough, Readable } from 'node:stream';
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { ZipWriter } from '../../server/lib/zip-writer';
import { digestText, SIGNATURE_ENTRY, type TrustedKey } from '../../server/plugins/package/package';
import { signLicence } from '../../server/store/licence-files';

export interface PublisherKey {
  publisher: string;
  privateKey: KeyObject;
  trusted: TrustedKey;
}

export function publisherKey(publisher = 'acme'): PublisherKey {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return { publisher, privateKey, trusted: { publisher, public_key_pem: publicKey.export({ type: 'spki', format: 'pem' }).toString() } };
}

export const sampleManifest = (over: Record<string, unknown> = {}) => ({
  id: 'hello',
  name: 'Hello',
  version: '1.0.0',
  publisher: 'acme',
  filex_range: '>=0.1.0 <1.0.0',
  default_language: 'en',
  permissions: ['files.read'],
  call_timeout_ms: 2000,
  actions: [{ id: 'greet', label: 'action.greet', applies: { kind: 'file', ext: ['txt'] } }],
  ...over,
});

export interface PackageSpec {
  key: PublisherKey;
  manifest?: unknown;
  code?: string;
  languages?: Record<string, unknown>;
  /** Extra entries (name → bytes), signed like the rest. */
  extra?: Record<string, string | Buffer>;
  /** Entries replaced or added after signing (tampering). */
  afterSigning?: Record<string, string | Buffer>;
  /** Sign with this key instead (the signature still names `key.publisher`). */
  signWith?: KeyObject;
  /**
   * Entry names the ZIP writer rightly refuses (`../x`, `/etc/x`): written under a
   * placeholder of the same byte length, then patched in the finished bytes.
   */
  hostileNames?: Record<string, string>;
}

export async function buildAppPackage(spec: PackageSpec): Promise<Buffer> {
  const files = new Map<string, Buffer>();
  const put = (name: string, v: string | Buffer) => files.set(name, Buffer.isBuffer(v) ? v : Buffer.from(v));
  put('manifest.json', JSON.stringify(spec.manifest ?? sampleManifest({ publisher: spec.key.publisher })));
  put('code.js', spec.code ?? `app.greet = ({ name }) => 'hello ' + name;`);
  for (const [lang, pack] of Object.entries(spec.languages ?? { en: { 'action.greet': 'Say hello' } })) put(`i18n/${lang}.json`, JSON.stringify(pack));
  for (const [n, v] of Object.entries(spec.extra ?? {})) put(n, v);
  const text = digestText([...files].map(([name, bytes]) => ({ name, bytes })));
  const signature = sign(null, Buffer.from(text), spec.signWith ?? spec.key.privateKey).toString('base64');
  put(SIGNATURE_ENTRY, JSON.stringify({ publisher: spec.key.publisher, alg: 'ed25519', signature }));
  for (const [n, v] of Object.entries(spec.afterSigning ?? {})) put(n, v);
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  const zip = new ZipWriter(out);
  for (const [name, bytes] of files) await zip.addFile(name, Readable.from([bytes]), { size: bytes.length, mtime: Date.UTC(2026, 0, 1), compress: true });
  await zip.finish();
  out.end();
  let bytes = Buffer.concat(chunks);
  for (const [placeholder, name] of Object.entries(spec.hostileNames ?? {})) {
    if (Buffer.byteLength(placeholder) !== Buffer.byteLength(name)) throw new Error('a hostile name needs a placeholder of its length');
    bytes = Buffer.from(bytes.toString('latin1').split(placeholder).join(name), 'latin1');
  }
  return bytes;
}

/**
 * A licence token as a store issues it (docs/app-plugins.md, "Licences"): base64url(payload) "."
 * base64url(Ed25519 signature of that text), payload defaults filled in.
 */
export function issueLicense(key: KeyObject, payload: Record<string, unknown>): string {
  return signLicence(key, { id: 'lic-1', store: 'shop', app: 'paid', licensee: 'Acme Ltd', ...payload });
}
