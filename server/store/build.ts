/**
 * `service store build DIR --key KEYFILE` (docs/app-store.md, "Running a
 * store"): lists every signed app or storage driver package (`*.zip`) and language pack
 * (`*.json` beside index.json) in DIR in a new index.json, one entry per id
 * with a version per package (size, sha256, compatibility range, permissions
 * from its manifest), and signs it with the store's Ed25519 key into
 * index.json.sig. The packages stay where they are. An entry's store-only
 * details come from `meta/<id>.json` when there is one: `{categories?,
 * icon?: "media/…", screenshots?: [{file: "media/…", caption: {en: …}}]}`,
 * each picture listed with its size and sha256.
 */
import { createHash, type KeyObject } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { peekAppManifest } from '../plugins';
import { compareVersions } from '../lib/versions';
import { isAppError } from '../errors';
import { INDEX_FILE, parseIndex, SIGNATURE_FILE, signIndex, STORE_FORMAT, type StoreEntry, type StoreIndex } from './format';
import { completeness, readPack } from './language-pack';
import { peekDriverManifest } from './driver-package';

/** What the index says of a package: its app manifest's facts, or a language pack's. */
interface PackageFacts {
  id: string;
  kind: StoreEntry['kind'];
  name: string;
  publisher: string;
  version: string;
  filex_range: string;
  description: Record<string, string>;
  license: StoreEntry['license'];
  permissions: string[];
  released?: string;
  /** A language pack's translated share of English, in percent. */
  completeness?: number;
}

async function readFacts(file: string, bytes: Buffer): Promise<PackageFacts> {
  if (file.endsWith('.json')) {
    const p = readPack(bytes);
    const description = { en: p.description ?? `${p.name} for the web UI, public pages and e-mails` };
    return {
      ...p,
      kind: 'language-pack',
      filex_range: p.filedock_range,
      description,
      license: { model: 'free' },
      permissions: [],
      completeness: completeness(p.strings),
    };
  }
  const driver = await peekDriverManifest(bytes);
  if (driver) {
    const description = { en: driver.description ?? `${driver.name}: a storage driver (plugin:${driver.id})` };
    return { ...driver, kind: 'storage', filex_range: driver.filedock_range, description, license: { model: 'free' }, permissions: [] };
  }
  const m = await peekAppManifest(bytes);
  return {
    ...m,
    kind: 'app',
    description: m.description ? { [m.default_language]: m.description } : {},
    license: m.license?.required ? { model: 'paid', store: m.license.store } : { model: 'free' },
    permissions: [...m.permissions],
  };
}

/** The size and sha256 of a picture the index lists. */
async function picture(dir: string, file: unknown) {
  if (typeof file !== 'string') throw new Error(`a picture is a file name under media/, not ${JSON.stringify(file)}`);
  const bytes = await readFile(join(dir, file));
  return { file, size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
}

/** `meta/<id>.json`: categories, icon and screenshots of an entry ({} without one); the index's schema checks them. */
async function readMeta(dir: string, id: string): Promise<Pick<StoreEntry, 'categories' | 'icon' | 'screenshots'>> {
  let meta: { categories?: StoreEntry['categories']; icon?: unknown; screenshots?: Array<{ file?: unknown; caption?: Record<string, string> }> };
  try {
    meta = JSON.parse(await readFile(join(dir, 'meta', `${id}.json`), 'utf8'));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new Error(`meta/${id}.json: ${(e as Error).message}`);
  }
  return {
    ...(meta.categories && { categories: meta.categories }),
    ...(meta.icon !== undefined && { icon: await picture(dir, meta.icon) }),
    ...(meta.screenshots && {
      screenshots: await Promise.all(meta.screenshots.map(async (s) => ({ ...(await picture(dir, s.file)), caption: s.caption ?? {} }))),
    }),
  };
}

export interface BuiltStore {
  index: StoreIndex;
  fingerprint: string;
}

export async function buildStore(dir: string, key: KeyObject, o: { name?: string; publisherKeys?: Record<string, string> } = {}): Promise<BuiltStore> {
  if (key.asymmetricKeyType !== 'ed25519') throw new Error('the store key must be an Ed25519 private key');
  const entries = new Map<string, StoreEntry>();
  const files = (await readdir(dir)).filter((n) => n.endsWith('.zip') || (n.endsWith('.json') && n !== INDEX_FILE)).sort();
  for (const file of files) {
    const bytes = await readFile(join(dir, file));
    let m: PackageFacts;
    try {
      m = await readFacts(file, bytes);
    } catch (e) {
      throw new Error(`${file}: ${isAppError(e) ? `${e.code} ${JSON.stringify(e.details)}` : (e as Error).message}`);
    }
    const e = entries.get(m.id) ?? {
      id: m.id,
      kind: m.kind,
      name: m.name,
      publisher: m.publisher,
      ...(o.publisherKeys?.[m.publisher] && { publisher_key: o.publisherKeys[m.publisher] }),
      description: m.description,
      license: m.license,
      versions: [],
    };
    if (e.versions.some((v) => v.version === m.version)) throw new Error(`${file}: ${m.id} ${m.version} is in the folder twice`);
    e.versions.push({
      version: m.version,
      filedock_range: m.filex_range,
      file,
      size: bytes.length,
      sha256: createHash('sha256').update(bytes).digest('hex'),
      permissions: m.permissions,
      ...(m.released && { released: m.released }),
      ...(m.completeness !== undefined && { completeness: m.completeness }),
    });
    // The entry's name and description follow its newest version.
    if (e.versions.every((v) => compareVersions(m.version, v.version) >= 0)) Object.assign(e, { name: m.name, description: m.description });
    entries.set(m.id, e);
  }
  for (const e of entries.values()) Object.assign(e, await readMeta(dir, e.id));
  const index: StoreIndex = {
    format: STORE_FORMAT,
    name: o.name ?? 'Filedock store',
    generated_at: new Date().toISOString(),
    entries: [...entries.values()].sort((a, b) => (a.id < b.id ? -1 : 1)),
  };
  const bytes = Buffer.from(`${JSON.stringify(index, null, 2)}\n`);
  // What a reader would refuse (a category not on the list, a picture too big) is refused here, naming the field.
  try {
    parseIndex(bytes);
  } catch (e) {
    throw new Error(`the index would not be read: ${isAppError(e) ? String(e.params.detail) : (e as Error).message}`);
  }
  const sig = signIndex(bytes, key);
  await writeFile(join(dir, INDEX_FILE), bytes);
  await writeFile(join(dir, SIGNATURE_FILE), sig);
  return { index, fingerprint: JSON.parse(sig).key };
}
