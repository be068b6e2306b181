// Precompresses the built web UI: beside each compressible file over 1 KiB, `<file>.br` (brotli, quality 11)
// and `<file>.gz` (gzip -9), each only when smaller than the file, and `precompressed.json`, the manifest
// the server trusts: it serves a twin only while the original still has the size and mtime recorded here
// (server/http/static.ts). Run by scripts/build.mjs after Vite; `node scripts/precompress.mjs DIR` alone.
import { readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const COMPRESSIBLE = /\.(js|mjs|css|html|svg|json|webmanifest|txt|map)$/;
const MIN_BYTES = 1024;
const MANIFEST = 'precompressed.json';

/** Temp + rename: a reader never sees half a file. */
function writeAtomic(path, data) {
  writeFileSync(`${path}.tmp`, data);
  renameSync(`${path}.tmp`, path);
}

function walk(dir, out = []) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (e.isFile() && COMPRESSIBLE.test(e.name) && e.name !== MANIFEST) out.push(p);
  }
  return out;
}

/** Writes the twins and the manifest for every file under `root`; returns the manifest's entries. */
export function precompress(root) {
  const files = {};
  for (const path of walk(root)) {
    const st = statSync(path);
    if (st.size <= MIN_BYTES) continue;
    const raw = readFileSync(path);
    const entry = { size: st.size, mtimeMs: st.mtimeMs };
    const br = brotliCompressSync(raw, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: 11,
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_SIZE_HINT]: raw.length,
      },
    });
    const gz = gzipSync(raw, { level: 9 });
    if (br.length < raw.length) writeAtomic(`${path}.br`, br), (entry.br = br.length);
    if (gz.length < raw.length) writeAtomic(`${path}.gz`, gz), (entry.gz = gz.length);
    if (entry.br || entry.gz) files[relative(root, path).split(sep).join('/')] = entry;
  }
  writeAtomic(join(root, MANIFEST), JSON.stringify({ v: 1, files }));
  return files;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const n = Object.keys(precompress(process.argv[2] ?? 'dist/renderer')).length;
  console.log(`precompressed ${n} files`);
}
