// Draws the tray icons (resources/tray-<state>.png and @2x) and the app icons
// (resources/icon.png for the window, build/icon.png for electron-builder,
// which derives .ico and .icns from it) from one SVG. Run after changing the
// drawing: `node resources/make-icons.mjs`; the PNGs are committed.
import sharp from 'sharp';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const build = fileURLToPath(new URL('../build/', import.meta.url));

// A folder with a dock bar; the dot in the corner shows the state.
const svg = (fill, dot) => `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">
  <path d="M3 8a2 2 0 0 1 2-2h7l3 3h12a2 2 0 0 1 2 2v14a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2z" fill="${fill}"/>
  <rect x="8" y="19" width="16" height="3" rx="1.5" fill="#fff"/>
  ${dot ? `<circle cx="26" cy="26" r="5.5" fill="${dot}" stroke="#fff" stroke-width="1.5"/>` : ''}
</svg>`;

// warn: the whole folder amber (the backup is behind), unlike busy's amber dot.
const states = { idle: ['#8a8f98', null], running: ['#2f6fde', null], busy: ['#2f6fde', '#f0a020'], warn: ['#e08a00', null], error: ['#2f6fde', '#d93025'] };
for (const [name, [fill, dot]] of Object.entries(states)) {
  await sharp(Buffer.from(svg(fill, dot)))
    .resize(16, 16)
    .png()
    .toFile(`${here}tray-${name}.png`);
  await sharp(Buffer.from(svg(fill, dot)))
    .resize(32, 32)
    .png()
    .toFile(`${here}tray-${name}@2x.png`);
}
await sharp(Buffer.from(svg('#2f6fde', null)), { density: 2400 })
  .resize(256, 256)
  .png()
  .toFile(`${here}icon.png`);
await sharp(Buffer.from(svg('#2f6fde', null)), { density: 2400 })
  .resize(1024, 1024)
  .png()
  .toFile(`${build}icon.png`);
