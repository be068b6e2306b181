/**
 * sharp, loaded on its first picture. Loading it maps libvips and its libraries and starts glib: ~19 MB of
 * RSS that an idle service (the tray, nobody browsing) would otherwise carry from the start (issue 37's
 * idle target). The one thing the service must know before any picture, whether this libvips reads SVG (the
 * capabilities' `thumbs.svg`, the boot warning), is asked of a short-lived child process at boot, so the
 * service itself maps libvips only when it first makes or scales a picture.
 */
import { execFile } from 'node:child_process';
import type Sharp from 'sharp';
import { lazy } from './lazy';

/** The tool reads each of its inputs once: no operation cache (a cached decode could outlive a changed file). */
export const loadSharp = lazy(async (): Promise<typeof Sharp> => {
  const sharp = (await import('sharp')).default;
  sharp.cache(false);
  // One libvips thread per image: the dispatcher's lanes are the parallelism, and libvips threads on top of
  // them (sharp's default is one per core outside glibc) only fight them for the cores.
  sharp.concurrency(1);
  svg = readsSvg(sharp);
  return sharp;
});

const readsSvg = (sharp: typeof Sharp): boolean => Boolean(sharp.format.svg?.input.buffer);

/** Known once the probe (or a load of sharp in this process) has answered; false until then. */
let svg = false;
let probed: Promise<boolean> | undefined;
const PROBE_TIMEOUT_MS = 20_000;

/** Whether sharp's libvips reads SVG, as last learned (see `probeSvg`). */
export function sharpReadsSvg(): boolean {
  return svg;
}

/**
 * Asks a child Node process whether sharp reads SVG (once per process: the library does not change while
 * the service runs). A child that cannot load sharp answers no; the service then names it in a warning.
 */
export function probeSvg(): Promise<boolean> {
  probed ??= new Promise<boolean>((resolve) => {
    const program = `import(${JSON.stringify(import.meta.resolve('sharp'))}).then((m) => process.stdout.write(String(Boolean(m.default.format.svg?.input.buffer))))`;
    execFile(
      process.execPath,
      ['--input-type=module', '-e', program],
      // The desktop shell's executable is Electron: ELECTRON_RUN_AS_NODE makes it plain Node.
      { timeout: PROBE_TIMEOUT_MS, env: { ...process.env, NODE_OPTIONS: '', ELECTRON_RUN_AS_NODE: '1' } },
      (err, stdout) => {
        svg ||= !err && stdout.trim() === 'true';
        resolve(svg);
      },
    );
  });
  return probed;
}
