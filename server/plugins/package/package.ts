/**
 * Reading a signed app package (docs/app-plugins.md): a ZIP holding
 * `manifest.json`, `code.js`, `i18n/<lang>.json`, `icons/*` and
 * `signature.json`. Nothing is trusted before the signature verifies; every
 * entry is size-capped before it is read, and names are judged by the archive
 * module's zip-slip rule. Refusals are `validation_failed` with the entry or
 * field path in `details.field`.
 */
import { Readable } from 'node:stream';
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { AppError, validation } from '../../errors';
import { sha256Hex } from '../../lib/crypto';
import { VERSION } from '../../version';
import { entryProblem, openZip, type ZipEntry } from '../../archives/zip-reader';
import { bad, parseManifest, type Manifest } from './manifest';
import { satisfies } from '../../lib/versions';

export const PACKAGE_LIMITS = {
  package_bytes: 16 * 1024 * 1024,
  entries: 64,
  code_bytes: 2 * 1024 * 1024,
  manifest_bytes: 256 * 1024,
  icon_bytes: 256 * 1024,
  signature_bytes: 4096,
  // The spec's language-pack limits.
  language_bytes: 1024 * 1024,
  languages_bytes: 4 * 1024 * 1024,
  string_bytes: 4096,
  key_bytes: 128,
};

export const SIGNATURE_ENTRY = 'signature.json';
const DIGEST_HEADER = 'filedock-app-package/1\n';

/** A publisher key the admin trusts: PEM (SPKI) of an Ed25519 public key. */
export interface TrustedKey {
  publisher: string;
  public_key_pem: string;
}

export interface AppPackage {
  manifest: Manifest;
  code: string;
  /** Language packs by language, flat key → text. */
  languages: Record<string, Record<string, string>>;
  icons: Record<string, Buffer>;
  /** sha256 of the signed digest text: names this exact package. */
  digest: string;
}

/**
 * The text a publisher signs: a header, then one line per entry (every entry
 * but the signature), sorted by name: `<sha256 hex> <name>\n`. Names cannot hold
 * a newline (refused at read), so the text is unambiguous.
 */
/** Refuses (`validation_failed` at `public_key_pem`) anything but an Ed25519 public key in PEM: the only kind packages and licences are signed with. */
export function requireEd25519Pem(pem: string): void {
  let type: string | undefined;
  try {
    type = createPublicKey(pem).asymmetricKeyType;
  } catch {
    throw validation('public_key_pem', 'not a PEM public key');
  }
  if (type !== 'ed25519') throw validation('public_key_pem', 'must be an Ed25519 key');
}

export function digestText(files: { name: string; bytes: Buffer }[]): string {
  const lines = files.map((f) => `${sha256Hex(f.bytes)} ${f.name}\n`);
  return (
    DIGEST_HEADER +
    [...files]
      .map((f, i) => [f.name, lines[i]] as const)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, l]) => l)
      .join('')
  );
}

/** Which cap applies to an entry name, or null when the name has no place in a package. */
function capFor(name: string): number | null {
  if (name === 'manifest.json') return PACKAGE_LIMITS.manifest_bytes;
  if (name === 'code.js') return PACKAGE_LIMITS.code_bytes;
  if (name === SIGNATURE_ENTRY) return PACKAGE_LIMITS.signature_bytes;
  if (/^i18n\/[a-z]{2,3}(-[A-Z]{2})?\.json$/.test(name)) return PACKAGE_LIMITS.language_bytes;
  if (/^icons\/[A-Za-z0-9_.-]{1,100}\.(png|svg)$/.test(name)) return PACKAGE_LIMITS.icon_bytes;
  return null;
}

async function readEntry(open: (e: ZipEntry) => Promise<Readable>, e: ZipEntry): Promise<Buffer> {
  const chunks: Buffer[] = [];
  // The reader stops at the declared size (checked against the cap already).
  for await (const c of await open(e)) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Reads every entry of a signed package ZIP, refusing unsafe names, unknown entries and oversized ones. `cap` says
 * which names belong (an app's by default; a storage driver package has its own, server/store/driver-package.ts).
 */
export async function readEntries(bytes: Buffer, cap: (name: string) => number | null = capFor): Promise<Map<string, Buffer>> {
  if (bytes.length > PACKAGE_LIMITS.package_bytes)
    throw new AppError('payload_too_large', { max: PACKAGE_LIMITS.package_bytes }, { max: PACKAGE_LIMITS.package_bytes });
  const zip = await openZip({ size: bytes.length, read: async ({ start, end }) => Readable.from([bytes.subarray(start, end + 1)]) });
  try {
    const files = zip.entries.filter((e) => !e.is_dir);
    if (files.length > PACKAGE_LIMITS.entries) bad('package', `more than ${PACKAGE_LIMITS.entries} entries`);
    const out = new Map<string, Buffer>();
    for (const e of zip.entries) {
      const problem = entryProblem(e.name) ?? (/[\n\r]/.test(e.name) ? 'newline' : null);
      if (problem) bad(e.name, `unsafe entry name (${problem})`);
    }
    for (const e of files) {
      const max = cap(e.name);
      if (max === null) bad(e.name, 'unknown entry');
      if (e.encrypted || e.symlink) bad(e.name, 'encrypted entries and links are refused');
      if (out.has(e.name)) bad(e.name, 'duplicate entry');
      if (e.size > max!) bad(e.name, `larger than ${max} bytes`);
      out.set(e.name, await readEntry(zip.open, e));
    }
    return out;
  } finally {
    zip.close();
  }
}

/** The publisher signature over every other entry, by a key the admin trusts for the publisher it names. */
export function verifySignature(entries: Map<string, Buffer>, trusted: TrustedKey[]): { publisher: string; digest: string } {
  const raw = entries.get(SIGNATURE_ENTRY) ?? bad(SIGNATURE_ENTRY, 'missing: the package is not signed');
  let sig: { publisher?: unknown; alg?: unknown; signature?: unknown };
  try {
    sig = JSON.parse(raw.toString('utf8'));
  } catch {
    return bad(SIGNATURE_ENTRY, 'not valid JSON');
  }
  for (const k of Object.keys(sig)) if (!['publisher', 'alg', 'signature'].includes(k)) bad(`${SIGNATURE_ENTRY}.${k}`, 'unknown field');
  if (sig.alg !== 'ed25519') bad(`${SIGNATURE_ENTRY}.alg`, 'must be ed25519');
  if (typeof sig.publisher !== 'string' || typeof sig.signature !== 'string') return bad(SIGNATURE_ENTRY, 'publisher and signature are required');
  const text = digestText([...entries].filter(([n]) => n !== SIGNATURE_ENTRY).map(([name, bytes]) => ({ name, bytes })));
  const signature = Buffer.from(sig.signature, 'base64');
  const keys = trusted.filter((k) => k.publisher === sig.publisher);
  if (!keys.length) bad(`${SIGNATURE_ENTRY}.publisher`, `no trusted key for publisher ${sig.publisher}`);
  const ok = keys.some((k) => {
    let key: KeyObject;
    try {
      key = createPublicKey(k.public_key_pem);
    } catch {
      return false;
    }
    return key.asymmetricKeyType === 'ed25519' && verify(null, Buffer.from(text), key, signature);
  });
  if (!ok) bad(SIGNATURE_ENTRY, `the signature does not verify against the trusted keys of ${sig.publisher} (a file was changed or another key signed it)`);
  return { publisher: sig.publisher, digest: sha256Hex(text) };
}

/** A flat language pack within the spec's limits. */
function parsePack(name: string, bytes: Buffer): Record<string, string> {
  let pack: unknown;
  try {
    pack = JSON.parse(bytes.toString('utf8'));
  } catch {
    return bad(name, 'not valid JSON');
  }
  if (!pack || typeof pack !== 'object' || Array.isArray(pack)) bad(name, 'must be an object of key → text');
  for (const [k, v] of Object.entries(pack as object)) {
    if (Buffer.byteLength(k) > PACKAGE_LIMITS.key_bytes) bad(`${name}: ${k.slice(0, 40)}…`, `key longer than ${PACKAGE_LIMITS.key_bytes} bytes`);
    if (typeof v !== 'string') bad(`${name}: ${k}`, 'must be a string');
    if (Buffer.byteLength(v) > PACKAGE_LIMITS.string_bytes) bad(`${name}: ${k}`, `text longer than ${PACKAGE_LIMITS.string_bytes} bytes`);
  }
  return pack as Record<string, string>;
}

/**
 * Verifies and reads a package: signature by a trusted publisher key first,
 * then the manifest, the running version against `filex_range`, the language
 * packs and the files the manifest names.
 */
export async function readAppPackage(bytes: Buffer, opts: { trusted: TrustedKey[]; version?: string }): Promise<AppPackage> {
  const entries = await readEntries(bytes);
  const { publisher, digest } = verifySignature(entries, opts.trusted);
  const manifest = parseManifest((entries.get('manifest.json') ?? bad('manifest.json', 'missing')).toString('utf8'));
  if (manifest.publisher !== publisher) bad('publisher', `the manifest names ${manifest.publisher} but ${publisher} signed it`);
  const version = opts.version ?? VERSION;
  if (!satisfies(version, manifest.filex_range)) bad('filex_range', `this service is version ${version}; the app needs ${manifest.filex_range}`);
  const codeBytes = entries.get('code.js') ?? bad('code.js', 'missing');
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  let codeText: string;
  try {
    codeText = utf8.decode(codeBytes);
  } catch {
    return bad('code.js', 'not UTF-8');
  }
  const languages: AppPackage['languages'] = {};
  let total = 0;
  for (const [name, b] of entries) {
    if (!name.startsWith('i18n/')) continue;
    total += b.length;
    if (total > PACKAGE_LIMITS.languages_bytes) bad('i18n', `language packs larger than ${PACKAGE_LIMITS.languages_bytes} bytes in all`);
    languages[name.slice(5, -5)] = parsePack(name, b);
  }
  const main = languages[manifest.default_language] ?? bad('default_language', `no pack i18n/${manifest.default_language}.json`);
  const labels = [
    ...manifest.actions.map((a, i) => [`actions[${i}].label`, a.label]),
    ...manifest.views.map((v, i) => [`views[${i}].label`, v.label]),
    ...manifest.open.flatMap((o, i) => (o.label ? [[`open[${i}].label`, o.label]] : [])),
  ];
  for (const [field, key] of labels) if (!(key in main)) bad(field, `no text for ${key} in the ${manifest.default_language} pack`);
  const icons: Record<string, Buffer> = {};
  const named = [...Object.values(manifest.icons), ...manifest.actions.map((a) => a.icon), ...manifest.views.map((v) => v.icon)].filter(
    (x): x is string => !!x,
  );
  for (const n of named) icons[n] = entries.get(n) ?? bad(n, 'named in the manifest but missing from the package');
  return { manifest, code: codeText, languages, icons, digest };
}

/**
 * A package's manifest, read without verifying the signature (it must be
 * there): a store's build lists packages whose publisher keys it need not hold;
 * every install still verifies them with `readAppPackage`.
 */
export async function peekAppManifest(bytes: Buffer): Promise<Manifest> {
  const entries = await readEntries(bytes);
  if (!entries.has(SIGNATURE_ENTRY)) bad(SIGNATURE_ENTRY, 'missing: the package is not signed');
  return parseManifest((entries.get('manifest.json') ?? bad('manifest.json', 'missing')).toString('utf8'));
}
