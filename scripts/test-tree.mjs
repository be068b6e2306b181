// Where scripts/test-compile.mjs puts a source's JavaScript, and back: the runner hands Node the compiled
// files and reports them (output, test-timings.json) by their sources' names. No dependencies: the timing
// hook loads this into every test process.
import { existsSync } from 'node:fs';

/** The compiled tree, repository-relative (gitignored). */
export const OUT = '.test-build';

/** The compiled file of a repository-relative `.ts`/`.tsx` path. */
export const compiledPath = (source) => `${OUT}/${source.replace(/\.tsx?$/, '.js')}`;

/** The source (`.ts` or `.tsx`) of a compiled file's repository-relative path; any other path as given. */
export function sourcePath(file) {
  if (!file.startsWith(`${OUT}/`)) return file;
  const base = file.slice(OUT.length + 1).replace(/\.js$/, '');
  return existsSync(`${base}.tsx`) ? `${base}.tsx` : `${base}.ts`;
}
