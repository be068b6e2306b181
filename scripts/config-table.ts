// Prints the README's configuration table from the one settings schema.
import { SETTINGS } from '../server/config/schema';

console.log('| Variable | Default | Meaning |\n|---|---|---|');
for (const s of Object.values(SETTINGS)) {
  const def = s.default === '' ? '(empty)' : `\`${s.default}\``;
  console.log(`| \`${s.key}\` | ${def} | ${s.doc.replace(/\|/g, '\\|')} |`);
}
