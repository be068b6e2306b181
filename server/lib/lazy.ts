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
