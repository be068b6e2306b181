/**
 * Images to PDF (docs/app-plugins.md; examples/README.md). "Convert to PDF" on
 * up to 500 JPEG/PNG images opens a small dialog (one PDF beside each image, or
 * one merged PDF) and runs as one job: each image becomes a page of its own
 * size, progress is reported per file.
 *
 * The sandbox gives a call at most `call_timeout_ms` (30 s) of CPU time inside
 * QuickJS. In "each" mode the job stops taking new images once it has used
 * CPU_SHARE of that and hands the rest to a follow-up job (`ops.create`), so a
 * batch of large images still finishes; a merge cannot be split (the document is
 * in memory), so it fails with a clear message instead.
 */
import '../../shared/host.js';
import { PDFDocument } from 'pdf-lib';
import { baseOf, call, clock, dirOf, readFile, texts, writeFree } from '../../shared/host.js';
import { addImagePage } from '../../shared/images.js';
import en from '../i18n/en.json';
import tr from '../i18n/tr.json';

const t = texts({ en, tr }, 'en');
const BUDGET_MS = 30000;
const CPU_SHARE = 0.6;
/** A merged PDF's images in all: they, the PDF and its base64 parts must fit the sandbox's memory. */
const MERGE_MAX_BYTES = 20 * 1024 * 1024;
/** No form appearances (there is no form) and no object streams (pako deflating them in QuickJS halved the speed). */
const SAVE = { objectsPerTick: Infinity, useObjectStreams: false, updateFieldAppearances: false };

function dialog(input) {
  const lang = input.lang;
  const count = (input.paths || []).length;
  return {
    title: t(lang, 'dialog.title', { count }),
    nodes: [
      {
        type: 'form',
        fields: [
          {
            key: 'mode',
            type: 'select',
            label: t(lang, 'dialog.mode'),
            required: true,
            default: 'each',
            options: [
              { value: 'each', label: t(lang, 'dialog.mode.each') },
              { value: 'merge', label: t(lang, 'dialog.mode.merge') },
            ],
          },
          {
            key: 'name',
            type: 'string',
            label: t(lang, 'dialog.name'),
            default: 'images',
            max_length: 200,
            show_when: { key: 'mode', equals: ['merge'] },
            required_when: { key: 'mode', equals: ['merge'] },
          },
        ],
      },
    ],
    footer: [{ id: 'convert', label: t(lang, 'dialog.convert'), primary: true }],
  };
}

/** A file name the user typed, made safe: no slashes or control characters, no leading dots, not empty. */
function cleanName(s) {
  const n = String(s || '')
    .replace(/[\u0000-\u001f/\\]+/g, ' ')
    .replace(/^[.\s]+/, '')
    .trim()
    .slice(0, 200)
    .replace(/\.pdf$/i, '');
  return n || 'images';
}

app.view = (input) => dialog(input);

app.event = (input) => {
  if (input.event === 'submit' || (input.event === 'action' && input.action_id === 'convert')) {
    const mode = input.data && input.data.mode === 'merge' ? 'merge' : 'each';
    const params = { mode, ...(mode === 'merge' && { name: cleanName(input.data.name) }) };
    return { job: { action: 'convert', params }, surface: { nodes: [{ type: 'text', text: t(input.lang, 'dialog.started') }] } };
  }
  return dialog(input);
};

app.action = async (input) => {
  clock.reset();
  const lang = input.lang;
  const params = input.params || {};
  const items = (input.paths || []).filter((p) => p.type === 'file');
  const total = items.length;
  const bytesTotal = items.reduce((s, p) => s + (p.size || 0), 0);
  let bytesDone = 0;
  const before = Number.isInteger(params.done_before) ? params.done_before : 0;
  // The admin may hand off sooner (settings.handoff_after_ms), never later than CPU_SHARE of the budget.
  const asked = Number(input.settings && input.settings.handoff_after_ms);
  const handoffMs = asked > 0 ? Math.min(asked, BUDGET_MS * CPU_SHARE) : BUDGET_MS * CPU_SHARE;
  const progress = (i, name) =>
    call('ops.progress', {
      fraction: total ? i / total : 1,
      message: t(lang, 'progress.file', { done: before + i, total: before + total, name }),
      bytes_done: bytesDone,
      bytes_total: bytesTotal,
    });

  if (params.mode === 'merge') {
    // Everything is held in memory until saved (the sandbox has 64 MiB by default): refuse at once, not after the work.
    if (bytesTotal > MERGE_MAX_BYTES) throw new Error('error.merge_too_long');
    const doc = await PDFDocument.create();
    for (let i = 0; i < total; i++) {
      if (clock.cpuMs() > BUDGET_MS * CPU_SHARE) throw new Error('error.merge_too_long');
      await addImagePage(doc, await readFile(items[i].path));
      bytesDone += items[i].size || 0;
      await progress(i + 1, items[i].name);
    }
    const out = await doc.save(SAVE);
    const name = cleanName(params.name);
    const w = await writeFree(dirOf(items[0].path), name, '.pdf', out);
    return { message: t(lang, 'done.merge', { count: total, name: w.path.slice(w.path.lastIndexOf('/') + 1) }), open: { path: w.path } };
  }

  let written = 0;
  for (let i = 0; i < total; i++) {
    if (i > 0 && clock.cpuMs() > handoffMs) {
      const rest = items.slice(i).map((p) => p.path);
      await call('ops.create', { action: 'convert', paths: rest, params: { mode: 'each', done_before: before + i } });
      return { message: t(lang, 'done.continued', { done: written, left: rest.length }) };
    }
    const p = items[i];
    const doc = await PDFDocument.create();
    await addImagePage(doc, await readFile(p.path));
    await writeFree(dirOf(p.path), baseOf(p.name), '.pdf', await doc.save(SAVE));
    written++;
    bytesDone += p.size || 0;
    await progress(i + 1, p.name);
  }
  return { message: t(lang, 'done.each', { count: written }) };
};
