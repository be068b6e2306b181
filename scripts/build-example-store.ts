/**
 * Builds the example store (examples/store/README.md, docs/app-store.md): the
 * two example apps of examples/ built and signed by scripts/build-example-apps.ts,
 * written as `<id>-<version>.zip` into the store folder, and the German
 * language pack assembled from examples/store/packs/de/ as `de-<version>.json`,
 * the example storage driver of examples/store/drivers/http-index/ as a signed
 * `http-index-<version>.zip`, then listed and signed by the store's key (the same code as `service store build`).
 *
 *   npx tsx scripts/build-example-store.ts --publisher-key publisher.pem --store-key store.pem [--out examples/store/site]
 *
 * Keys are Ed25519 private keys in PEM (make them with `service store keygen FILE`).
 */
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import sharp from 'sharp';
import { buildStore, DRIVER_MANIFEST, DRIVER_PROGRAM, PACK_FORMAT, packFile } from '../server/store';
import { EXAMPLE_APPS, EXAMPLES_DIR, exampleAppFiles, publicPem, signedPackage, type ExampleApp } from './build-example-apps';

export const EXAMPLE_PUBLISHER = 'filedock-examples';

/**
 * One example app as a signed package, its manifest changed by `patch` (a new
 * version, another permission): how a publisher's next release looks.
 */
export async function exampleRelease(app: ExampleApp, publisherKey: KeyObject, patch: Record<string, unknown> = {}): Promise<{ file: string; bytes: Buffer }> {
  const files = await exampleAppFiles(app, EXAMPLE_PUBLISHER);
  const manifest = { ...JSON.parse(files.get('manifest.json')!.toString('utf8')), ...patch };
  files.set('manifest.json', Buffer.from(JSON.stringify(manifest, null, 2)));
  return { file: `${app}-${manifest.version}.zip`, bytes: await signedPackage(files, EXAMPLE_PUBLISHER, publisherKey) };
}

/** The German pack's source: `pack.json`, `ui/<file>.json` per renderer/src/i18n/en/<file>.ts, `server/{errors,public}.json`. */
export const GERMAN_PACK_DIR = join(EXAMPLES_DIR, 'store/packs/de');

const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8'));

/** A language pack file (docs/app-store.md, "Language packs") from its source folder; `patch` changes its facts (a new version). */
export function languagePack(src: string, patch: Record<string, unknown> = {}): { file: string; bytes: Buffer } {
  const ui = Object.assign(
    {},
    ...readdirSync(join(src, 'ui'))
      .filter((f) => f.endsWith('.json'))
      .sort()
      .map((f) => readJson(join(src, 'ui', f))),
  );
  const strings = { ui, errors: readJson(join(src, 'server/errors.json')), public: readJson(join(src, 'server/public.json')) };
  const pack = { format: PACK_FORMAT, ...readJson(join(src, 'pack.json')), ...patch, strings };
  return { file: packFile(pack.id, pack.version), bytes: Buffer.from(`${JSON.stringify(pack, null, 1)}\n`) };
}

/** The UI source files of a pack, by the English catalogue file each mirrors (`core` for ui/core.json). */
export const packUiFiles = (src: string): string[] =>
  readdirSync(join(src, 'ui'))
    .filter((f) => f.endsWith('.json'))
    .map((f) => basename(f, '.json'))
    .sort();

/** The example storage driver's source: `driver.json` and `index.mjs` (docs/app-store.md, "Storage drivers"). */
export const EXAMPLE_DRIVER_DIR = join(EXAMPLES_DIR, 'store/drivers/http-index');

/** The example driver as a signed package; `patch` changes its driver.json (a new version), `program` replaces index.mjs. */
export async function exampleDriver(publisherKey: KeyObject, patch: Record<string, unknown> = {}, program?: Buffer): Promise<{ file: string; bytes: Buffer }> {
  const manifest = { ...readJson(join(EXAMPLE_DRIVER_DIR, DRIVER_MANIFEST)), ...patch };
  const files = new Map([
    [DRIVER_MANIFEST, Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`)],
    [DRIVER_PROGRAM, program ?? readFileSync(join(EXAMPLE_DRIVER_DIR, DRIVER_PROGRAM))],
  ]);
  return { file: `${manifest.id}-${manifest.version}.zip`, bytes: await signedPackage(files, EXAMPLE_PUBLISHER, publisherKey) };
}

/** The catalogue's categories of each example entry (docs/app-store.md, "Categories and pictures"). */
const EXAMPLE_CATEGORIES: Record<string, string[]> = {
  'images-to-pdf': ['documents', 'media'],
  'fill-and-sign': ['documents', 'productivity'],
  'http-index': ['storage'],
  de: ['language'],
};

/**
 * Each example's store-only details: `meta/<id>.json` with its categories and, for an app, its icon
 * (the package's SVG drawn as a 128-pixel PNG: a store serves no SVG, which could carry script).
 */
async function exampleMeta(dir: string) {
  mkdirSync(join(dir, 'meta'), { recursive: true });
  mkdirSync(join(dir, 'media'), { recursive: true });
  for (const [id, categories] of Object.entries(EXAMPLE_CATEGORIES)) {
    const svg = join(EXAMPLES_DIR, id, 'icons/icon.svg');
    const icon = (EXAMPLE_APPS as readonly string[]).includes(id) ? `media/${id}-icon.png` : undefined;
    if (icon) writeFileSync(join(dir, icon), await sharp(readFileSync(svg), { density: 300 }).resize(128, 128).png().toBuffer());
    writeFileSync(join(dir, 'meta', `${id}.json`), `${JSON.stringify({ categories, ...(icon && { icon }) })}\n`);
  }
}

/** Writes both example apps, the German pack and the example driver into `dir` and signs the store index with `storeKey`. */
export async function buildExampleStore(dir: string, publisherKey: KeyObject, storeKey: KeyObject) {
  mkdirSync(dir, { recursive: true });
  for (const app of EXAMPLE_APPS) {
    const { file, bytes } = await exampleRelease(app, publisherKey);
    writeFileSync(join(dir, file), bytes);
  }
  await exampleMeta(dir);
  const de = languagePack(GERMAN_PACK_DIR);
  writeFileSync(join(dir, de.file), de.bytes);
  const driver = await exampleDriver(publisherKey);
  writeFileSync(join(dir, driver.file), driver.bytes);
  return buildStore(dir, storeKey, { name: 'Filedock example store', publisherKeys: { [EXAMPLE_PUBLISHER]: publicPem(publisherKey) } });
}

async function main(argv: string[]) {
  const arg = (name: string) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const pk = arg('--publisher-key');
  const sk = arg('--store-key');
  if (!pk || !sk) throw new Error('usage: build-example-store.ts --publisher-key <pem> --store-key <pem> [--out dir]');
  const out = resolve(arg('--out') ?? join(EXAMPLES_DIR, 'store/site'));
  const built = await buildExampleStore(out, createPrivateKey(readFileSync(pk)), createPrivateKey(readFileSync(sk)));
  process.stdout.write(
    `${out}: ${built.index.entries.map((e) => `${e.id} ${e.versions.map((v) => v.version).join(', ')}`).join('; ')}\nstore key fingerprint ${built.fingerprint}\n`,
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main(process.argv.slice(2)).catch((e) => {
    process.stderr.write(`${(e as Error).message}\n`);
    process.exit(1);
  });
}
