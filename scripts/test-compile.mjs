// Transpiles every TypeScript file the tests load (the roots below, as tsconfig.json includes them) 1:1 into
// `.test-build/` (gitignored), the same tree with `.js` files, so that `npm test` runs plain Node on them
// instead of loading each test file's ~2,800 modules through tsx's loader hooks (docs/testing.md, "Compiled
// test tree"). Relative imports are resolved as the sources write them (extensionless, directories) and
// rewritten to the mirrored `.js` file; packages stay imports; JSON is inlined. `import.meta.url` (and
// `import.meta.dirname`) become the source file's, so every lookup relative to a module (fixtures,
// migrations, dist/, the repository root) finds what it finds from source; `import.meta.filename` stays the
// running file's (server/lib/worker.ts starts a worker's mirrored `.js` by it). Inline source maps: with
// `--enable-source-maps` stack traces name the `.ts` file and line.
// Incremental: a file whose mtime changed is transpiled again; a file added or removed transpiles every file
// again (an import may now resolve elsewhere), in place, and removes only the removed sources' outputs, so a
// run already testing from the tree keeps finding its files. Two runs in one checkout take turns to compile
// (a lock directory beside the tree).
//   node scripts/test-compile.mjs        (scripts/test.mjs runs it before every run)
import { build } from 'esbuild';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { dirname, extname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { OUT } from './test-tree.mjs';

// The project is the working directory, as for scripts/test.mjs (test/harness runs it on projects of its own).
const root = process.cwd();
const out = join(root, OUT);
const state = join(out, '.sources.json');
const lock = `${out}.lock`;
const ROOTS = ['server', 'test', 'electron', 'renderer/src', 'bench'];
const TS = /\.tsx?$/;

/** Every `.ts`/`.tsx` file the tests may load, repository-relative, with its mtime. */
function sources() {
  const found = {};
  const walk = (dir) => {
    for (const d of readdirSync(join(root, dir), { withFileTypes: true })) {
      if (d.name === 'node_modules' || d.name === 'dist') continue;
      const p = join(dir, d.name);
      if (d.isDirectory()) walk(p);
      else if (TS.test(d.name) && !d.name.endsWith('.d.ts')) found[p] = statSync(join(root, p)).mtimeMs;
    }
  };
  for (const r of ROOTS) if (existsSync(join(root, r))) walk(r);
  // scripts/ holds runnable .mjs beside a few .ts (not recursed: scripts/*.ts as tsconfig.json says).
  if (existsSync(join(root, 'scripts')))
    for (const n of readdirSync(join(root, 'scripts'))) if (TS.test(n)) found[join('scripts', n)] = statSync(join(root, 'scripts', n)).mtimeMs;
  return found;
}

/** The file a relative specifier names the way the sources' moduleResolution (Bundler) finds it. */
function resolveRelative(from, spec) {
  const abs = resolve(from, spec);
  const tries = [abs, `${abs}.ts`, `${abs}.tsx`, join(abs, 'index.ts'), join(abs, 'index.tsx')];
  if (abs.endsWith('.js')) tries.push(abs.replace(/\.js$/, '.ts'), abs.replace(/\.js$/, '.tsx'));
  return tries.find((p) => existsSync(p) && statSync(p).isFile());
}

const dotted = (p) => (p.startsWith('.') ? p : `./${p}`);

/** esbuild in bundle mode with every import external: one output per source, its imports rewritten. */
const mirrorImports = (compiled) => ({
  name: 'mirror-imports',
  setup(b) {
    b.onResolve({ filter: /.*/ }, (a) => {
      if (a.kind === 'entry-point') return undefined;
      if (!a.path.startsWith('.') && !a.path.startsWith('/')) return { path: a.path, external: true };
      const target = resolveRelative(a.resolveDir, a.path);
      if (!target) return { errors: [{ text: `cannot resolve ${a.path} from ${relative(root, a.importer)}` }] };
      if (target.endsWith('.json')) return { path: target };
      const rel = relative(root, target);
      // A compiled file imports the compiled file; anything else (scripts/*.mjs, fixtures) stays where it is.
      const mirrorDir = join(out, relative(root, dirname(a.importer)));
      const path = compiled.has(rel) ? dotted(relative(dirname(a.importer), target).replace(TS, '.js')) : dotted(relative(mirrorDir, target));
      return { path, external: true };
    });
    b.onLoad({ filter: TS }, (a) => {
      const src = readFileSync(a.path, 'utf8')
        .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(a.path).href))
        .replaceAll('import.meta.dirname', JSON.stringify(dirname(a.path)));
      return { contents: src, loader: extname(a.path).slice(1) };
    });
  },
});

/**
 * Brings `.test-build/` up to date with the sources; returns what it did. Cheap when nothing changed (the
 * sources' mtimes are compared with the last run's).
 */
export async function compileTests() {
  const started = performance.now();
  await takeLock();
  try {
    return await compile(started);
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** The lock is a directory (mkdir is atomic) holding its owner's pid; one whose owner is gone is taken over. */
async function takeLock() {
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      return;
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
    }
    if (!ownerAlive()) rmSync(lock, { recursive: true, force: true });
    else await sleep(200);
  }
}

function ownerAlive() {
  let pid;
  try {
    pid = Number(readFileSync(join(lock, 'pid'), 'utf8'));
  } catch {
    // Made but its pid not yet written: give the owner a moment, unless the directory is old.
    try {
      return Date.now() - statSync(lock).mtimeMs < 5000;
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
}

async function compile(started) {
  const now = sources();
  let before = {};
  try {
    before = JSON.parse(readFileSync(state, 'utf8'));
  } catch {
    /* no tree yet: everything */
  }
  const names = Object.keys(now);
  const sameSet = names.length === Object.keys(before).length && names.every((n) => n in before);
  const todo = sameSet ? names.filter((n) => before[n] !== now[n]) : names;
  if (todo.length > 0) {
    for (const gone of Object.keys(before).filter((n) => !(n in now))) rmSync(join(out, gone.replace(TS, '.js')), { force: true });
    mkdirSync(out, { recursive: true });
    // Written first: a build that fails halfway leaves a state that rebuilds those files next time.
    writeFileSync(state, JSON.stringify(sameSet ? { ...before, ...Object.fromEntries(todo.map((n) => [n, 0])) } : {}));
    await build({
      entryPoints: todo.map((n) => join(root, n)),
      outdir: out,
      outbase: root,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      sourcemap: 'inline',
      sourcesContent: false,
      jsx: 'automatic',
      logLevel: 'error',
      plugins: [mirrorImports(new Set(names))],
    });
    writeFileSync(state, JSON.stringify(now));
  }
  return { files: names.length, compiled: todo.length, ms: Math.round(performance.now() - started) };
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const r = await compileTests();
  console.log(`# ${OUT}: ${r.compiled} of ${r.files} files transpiled in ${r.ms} ms`);
}
