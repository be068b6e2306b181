/**
 * Builds the example apps in examples/ (examples/README.md) into signed
 * packages an admin can install (docs/app-plugins.md, "Package format"):
 * each app's src/main.js is bundled with pdf-lib into one plain script
 * (code.js: esbuild, iife, es2020, minified; the sandbox runs it in QuickJS),
 * then manifest.json, code.js, i18n/*.json and the icons the manifest names
 * are zipped with the project's ZIP writer and signed with an Ed25519
 * publisher key over the package digest text.
 *
 *   npx tsx scripts/build-example-apps.ts --gen-key publisher.pem   # once: a key pair; prints the public key
 *   npx tsx scripts/build-example-apps.ts --key publisher.pem [--out dist/example-apps] [--publisher filedock-examples]
 *
 * The publisher name in each manifest is replaced by --publisher (default
 * filedock-examples), so a site can sign the examples as its own publisher.
 */
import { build } from 'esbuild';
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { ZipWriter } from '../server/lib/zip-writer';
import { digestText, SIGNATURE_ENTRY } from '../server/plugins/package/package';

const ROOT = resolve(new URL('..', import.meta.url).pathname);
export const EXAMPLES_DIR = join(ROOT, 'examples');
export const EXAMPLE_APPS = ['images-to-pdf', 'fill-and-sign'] as const;
export type ExampleApp = (typeof EXAMPLE_APPS)[number];
/** The package format's cap for code.js. */
const CODE_CAP = 2 * 1024 * 1024;

/** The files of one app's package (name → bytes), code.js bundled; `publisher` replaces the manifest's. */
export async function exampleAppFiles(app: ExampleApp, publisher?: string): Promise<Map<string, Buffer>> {
  const dir = join(EXAMPLES_DIR, app);
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as {
    publisher: string;
    icons?: Record<string, string>;
    actions?: Array<{ icon?: string }>;
    views?: Array<{ icon?: string }>;
  };
  if (publisher) manifest.publisher = publisher;
  const out = await build({
    entryPoints: [join(dir, 'src/main.js')],
    bundle: true,
    format: 'iife',
    target: 'es2020',
    minify: true,
    write: false,
    platform: 'neutral',
    mainFields: ['module', 'main'],
    logLevel: 'error',
    legalComments: 'none',
  });
  const code = Buffer.from(out.outputFiles[0].contents);
  if (code.length > CODE_CAP) throw new Error(`${app}: code.js is ${code.length} bytes, over the ${CODE_CAP} cap`);
  const files = new Map<string, Buffer>();
  files.set('manifest.json', Buffer.from(JSON.stringify(manifest, null, 2)));
  files.set('code.js', code);
  for (const f of readdirSync(join(dir, 'i18n'))
    .filter((n) => n.endsWith('.json'))
    .sort())
    files.set(`i18n/${f}`, readFileSync(join(dir, 'i18n', f)));
  const icons = new Set(
    [...Object.values(manifest.icons ?? {}), ...(manifest.actions ?? []).map((a) => a.icon), ...(manifest.views ?? []).map((v) => v.icon)].filter(
      (x): x is string => !!x,
    ),
  );
  for (const icon of icons) files.set(icon, readFileSync(join(dir, icon)));
  return files;
}

/** Zips `files` with a `signature.json` over the package digest text, signed by `privateKey` for `publisher`. */
export async function signedPackage(files: Map<string, Buffer>, publisher: string, privateKey: KeyObject): Promise<Buffer> {
  const text = digestText([...files].map(([name, bytes]) => ({ name, bytes })));
  const signature = sign(null, Buffer.from(text), privateKey).toString('base64');
  const all = new Map(files).set(SIGNATURE_ENTRY, Buffer.from(JSON.stringify({ publisher, alg: 'ed25519', signature })));
  const sink = new PassThrough();
  const chunks: Buffer[] = [];
  sink.on('data', (c: Buffer) => chunks.push(c));
  const zip = new ZipWriter(sink);
  for (const [name, bytes] of all) await zip.addFile(name, Readable.from([bytes]), { size: bytes.length, mtime: Date.UTC(2026, 0, 1), compress: true });
  await zip.finish();
  sink.end();
  return Buffer.concat(chunks);
}

/** One example app as a signed package. */
export async function buildExampleApp(app: ExampleApp, publisher: string, privateKey: KeyObject): Promise<Buffer> {
  return signedPackage(await exampleAppFiles(app, publisher), publisher, privateKey);
}

/** The SPKI PEM an admin trusts for a private key. */
export const publicPem = (privateKey: KeyObject) => createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }).toString();

async function main(argv: string[]) {
  const arg = (name: string) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const genKey = arg('--gen-key');
  if (genKey) {
    if (existsSync(genKey)) throw new Error(`${genKey} exists; not replacing a key`);
    const { privateKey } = generateKeyPairSync('ed25519');
    writeFileSync(genKey, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    process.stdout.write(`private key written to ${genKey} (keep it secret)\npublic key to trust (Admin → Apps → Publisher keys):\n${publicPem(privateKey)}`);
    return;
  }
  const keyFile = arg('--key');
  if (!keyFile) throw new Error('usage: build-example-apps.ts --key <ed25519 private key PEM> [--out dir] [--publisher name] | --gen-key <file>');
  const privateKey = createPrivateKey(readFileSync(keyFile));
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new Error('the publisher key must be an Ed25519 private key');
  const publisher = arg('--publisher') ?? 'filedock-examples';
  const outDir = resolve(arg('--out') ?? join(ROOT, 'dist/example-apps'));
  mkdirSync(outDir, { recursive: true });
  for (const app of EXAMPLE_APPS) {
    const zip = await buildExampleApp(app, publisher, privateKey);
    const file = join(outDir, `${app}.zip`);
    writeFileSync(file, zip);
    process.stdout.write(`${file} (${zip.length} bytes)\n`);
  }
  process.stdout.write(`publisher ${publisher}; trust this public key:\n${publicPem(privateKey)}`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main(process.argv.slice(2)).catch((e) => {
    process.stderr.write(`${(e as Error).message}\n`);
    process.exit(1);
  });
}
