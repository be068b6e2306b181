// Records every module file a Node process loads, one path a line, appended to LOAD_RECORD_FILE:
//   LOAD_RECORD_FILE=/tmp/x NODE_OPTIONS="--import ./scripts/load-recorder.mjs" node dist/server/cli.js serve
// ES modules through a loader hook (it runs on the loader's own thread, hence the file rather than memory),
// CommonJS through Module's compile step (`require` of CJS files does not pass the ESM hooks on Node 20).
// Used by bench/startup.ts and the first-use loading test (test/http/lazy-loading.test.ts).
import { appendFileSync } from 'node:fs';
import Module, { register } from 'node:module';

const out = process.env.LOAD_RECORD_FILE;
if (out) {
  register(
    'data:text/javascript,' +
      encodeURIComponent(`
        import { appendFileSync } from 'node:fs';
        export async function load(url, context, next) {
          if (url.startsWith('file:')) appendFileSync(${JSON.stringify(out)}, decodeURIComponent(new URL(url).pathname) + '\\n');
          return next(url, context);
        }`),
  );
  const compile = Module.prototype._compile;
  Module.prototype._compile = function (content, filename) {
    appendFileSync(out, `${filename}\n`);
    return compile.call(this, content, filename);
  };
}
