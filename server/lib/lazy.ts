import { createRequire } from 'node:module';

/**
 * A module loaded on its first use and shared afterwards: for libraries most
 * installs never call (passkeys, QR codes, Markdown previews), so they cost no
 * memory at start. A failed load is tried again on the next use.
 */
export function lazy<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () =>
    (loaded ??= load().catch((e) => {
      loaded = undefined;
      throw e;
    }));
}

const requireHere = createRequire(import.meta.url);

/**
 * A CommonJS package loaded on its first use, synchronously: for call sites that cannot wait (a sync
 * parser, a config reader). Type it with `import type`: `lazyRequire<typeof import('ssh2')>('ssh2')`.
 */
export function lazyRequire<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= requireHere(name) as T);
}
