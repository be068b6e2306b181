/**
 * The decrypting script of the public page of a link to an encrypted file
 * (docs/vault.md, "Links"): Vite builds it from renderer/src/vault-link/ as
 * the entry renderer/vault-link.html, whose built copy names the hashed
 * module. The page loads that module under its nonce, with the strings the
 * script shows in the visitor's language.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Lang } from '../../lib/i18n';
import { pt } from '../../shares';
import { esc } from './page';

const ENTRY = 'vault-link.html';
let seen: { file: string; mtimeMs: number; modules: string[] } | null = null;

/** The module script(s) of the built entry (`/assets/vault-link-<hash>.js`); none when the web UI is not built. */
export async function vaultLinkModules(rendererDir: string): Promise<string[]> {
  const file = join(rendererDir, ENTRY);
  const st = await stat(file).catch(() => null);
  if (!st) return [];
  if (seen?.file === file && seen.mtimeMs === st.mtimeMs) return seen.modules;
  const html = await readFile(file, 'utf8');
  const modules = [...html.matchAll(/<script\b[^>]*\bsrc="(\/assets\/[\w.-]+\.js)"/g)].map((m) => m[1]);
  seen = { file, mtimeMs: st.mtimeMs, modules };
  return modules;
}

const KEYS = ['decrypting', 'in_browser', 'save', 'untitled', 'missing', 'incomplete', 'integrity', 'failed', 'insecure'] as const;

/** The `data-strings` attribute of the page's `#vault-link` element: the script's sentences in `lang`. */
export function vaultLinkStrings(lang: Lang): string {
  const strings: Record<string, string> = { size: pt(lang, 'file.size') };
  for (const k of KEYS) strings[k] = pt(lang, `vlink.${k}`, k === 'decrypting' ? { pct: '{pct}' } : k === 'failed' ? { reason: '{reason}' } : undefined);
  return `data-strings="${esc(JSON.stringify(strings))}"`;
}
