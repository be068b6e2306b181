/**
 * Fill and sign PDF (examples/README.md). "Fill and sign" on one PDF opens a
 * dialog: the PDF's form fields (its AcroForm, read with pdf-lib) and a
 * signature box (the PDF's first signature field, else a default box at the
 * bottom of the last page), a signature pad, and "also ask someone else to
 * sign" (a people picker). Submitting queues the `sign` job: it writes
 * `<name>-signed.pdf` beside the PDF (fields filled, the signature drawn) and
 * marks it `fill-and-sign:signed`.
 *
 * With another signer the job also locks the original ("Out for signature"),
 * marks it `awaiting_signature` and creates a public signing page for it with a
 * PIN (shown once, on the surface the submit answers). The signer's submit on
 * that page queues `countersign`: the second signature goes into the signed
 * copy (the second signature field, else a box at the bottom right), the copy
 * is marked `signed`, and the original's lock and mark are cleared.
 *
 * Field keys: a field whose name fits the surface key rule (A-Z a-z 0-9 _ . : -)
 * keeps it; any other is `f<n>` (its position in the form), its name the label.
 * Coordinates in `pdf-fields` are PDF points from the page's bottom left.
 */
import '../../shared/host.js';
import { PDFBool, PDFCheckBox, PDFDocument, PDFName, PDFSignature, PDFTextField, StandardFonts, rgb } from 'pdf-lib';
import { baseOf, call, dirOf, fromBase64, readFile, texts, writeFile } from '../../shared/host.js';
import en from '../i18n/en.json';
import tr from '../i18n/tr.json';

const t = texts({ en, tr }, 'en');
const KEY = /^[A-Za-z0-9_.:-]{1,128}$/;
const RESERVED = new Set(['fields', 'signature', 'signer', 'signer_name']);
const SIGNATURE_MAX = 48 * 1024; // the data URL's characters: params hold 64 KiB in all

const signedPathOf = (p) => `${dirOf(p.path)}/${baseOf(p.name)}-signed.pdf`;

async function load(bytes) {
  try {
    const doc = await PDFDocument.load(bytes, { updateMetadata: false });
    // pdf-lib parses leniently: a file without a usable page tree only fails here.
    if (doc.getPageCount() < 1) throw new Error('no pages');
    doc.getPages();
    return doc;
  } catch (e) {
    throw new Error(/encrypt/i.test(String(e && e.message)) ? 'error.encrypted' : 'error.not_a_pdf');
  }
}

/** Page index (0-based) of each widget, by the widget's /P or by the pages' /Annots. */
function pageOfWidget(doc, widget) {
  const pages = doc.getPages();
  const p = widget.P();
  if (p) {
    const i = pages.findIndex((pg) => pg.ref === p || String(pg.ref) === String(p));
    if (i >= 0) return i;
  }
  const ref = doc.context.getObjectRef(widget.dict);
  for (let i = 0; i < pages.length; i++) {
    const annots = pages[i].node.Annots();
    if (annots && ref && annots.asArray().some((a) => String(a) === String(ref))) return i;
  }
  return pages.length - 1;
}

/** The fields the app fills or signs: `{key, name, kind, page, x, y, w, h, required, field}`. */
function fieldsOf(doc) {
  let fields = [];
  try {
    fields = doc.getForm().getFields();
  } catch {
    fields = [];
  }
  const out = [];
  fields.forEach((f, i) => {
    const kind = f instanceof PDFTextField ? 'text' : f instanceof PDFCheckBox ? 'checkbox' : f instanceof PDFSignature ? 'signature' : null;
    if (!kind) return;
    const name = f.getName();
    const widget = f.acroField.getWidgets()[0];
    const r = widget ? widget.getRectangle() : { x: 0, y: 0, width: 0, height: 0 };
    out.push({
      key: KEY.test(name) && !RESERVED.has(name) ? name : `f${i}`,
      name,
      kind,
      field: f,
      page: widget ? pageOfWidget(doc, widget) : 0,
      x: r.x,
      y: r.y,
      w: r.width,
      h: r.height,
      required: f.isRequired(),
    });
  });
  return out;
}

/** Where signer n (0: the owner, 1: the other signer) signs: the n-th signature field, else a default box on the last page. */
function signatureBox(doc, fields, n) {
  const sig = fields.filter((f) => f.kind === 'signature')[n];
  if (sig && sig.w > 0 && sig.h > 0) return { page: sig.page, x: sig.x, y: sig.y, w: sig.w, h: sig.h };
  const page = doc.getPageCount() - 1;
  const { width } = doc.getPage(page).getSize();
  const w = Math.max(60, Math.min(200, width / 2 - 40));
  return { page, x: n === 0 ? 40 : Math.max(40, width - 40 - w), y: 40, w, h: 60 };
}

const node = (box, key, label, required) => ({ key, label, page: box.page + 1, x: box.x, y: box.y, w: box.w, h: box.h, kind: 'signature', required });

/** The dialog (owner) or the public page (the other signer). */
async function surfaceFor(input, publicPage) {
  const lang = input.lang;
  const p = (input.paths || [])[0];
  if (!p) return { nodes: [{ type: 'text', style: 'error', text: t(lang, 'error.no_file') }] };
  let doc,
    path = p.path;
  try {
    // The other signer signs the copy the owner prepared: the page exposes it as its second file
    // (a page's app reads only the files it exposes); an older page exposing only the original shows that.
    const copy = publicPage ? (input.paths || [])[1] : null;
    if (copy) {
      try {
        doc = await load(await readFile(copy.path));
        path = copy.path;
      } catch {
        doc = await load(await readFile(p.path));
      }
    } else doc = await load(await readFile(p.path));
  } catch (e) {
    return { nodes: [{ type: 'text', style: 'error', text: t(lang, String(e.message).startsWith('error.') ? e.message : 'error.not_a_pdf') }] };
  }
  const fields = fieldsOf(doc);
  if (publicPage) {
    const box = signatureBox(doc, fields, 1);
    return {
      title: t(lang, 'page.title', { name: p.name }),
      nodes: [
        { type: 'text', text: t(lang, 'page.intro', { name: p.name }) },
        { type: 'pdf-fields', key: 'fields', path, fields: [node(box, 'signature', t(lang, 'field.signature'), true)] },
        { type: 'form', fields: [{ key: 'signer_name', type: 'string', label: t(lang, 'page.your_name'), required: true, max_length: 120 }] },
        { type: 'signature-pad', key: 'signature', label: t(lang, 'field.signature'), required: true },
      ],
      footer: [{ id: 'submit', label: t(lang, 'page.sign'), primary: true }],
    };
  }
  const listed = fields
    .filter((f) => f.kind !== 'signature')
    .map((f) => ({ key: f.key, label: f.name, page: f.page + 1, x: f.x, y: f.y, w: f.w, h: f.h, kind: f.kind, required: f.required }));
  const box = signatureBox(doc, fields, 0);
  return {
    title: t(lang, 'dialog.title', { name: p.name }),
    nodes: [
      { type: 'text', text: t(lang, listed.length ? 'dialog.intro_fields' : 'dialog.intro_no_fields', { count: listed.length }) },
      { type: 'pdf-fields', key: 'fields', path: p.path, fields: [...listed, node(box, 'signature', t(lang, 'field.signature'), false)] },
      { type: 'signature-pad', key: 'signature', label: t(lang, 'field.signature'), required: false },
      { type: 'people-picker', key: 'signer', label: t(lang, 'dialog.also_ask'), multi: false, required: false },
    ],
    footer: [{ id: 'submit', label: t(lang, 'dialog.submit'), primary: true }],
  };
}

/**
 * The public signing page is the view `sign` (placement `page`, named by `pages.create {page: 'sign'}`);
 * the owner's dialog is the view `fill`. A page call may also say so itself (`public`, `page`).
 */
const isPublic = (input) => input.view === 'sign' || !!(input.public || input.page);

/** The submitted field values, keyed like the surface: `data.fields.{key}` or `data.{key}`. */
function valuesOf(data) {
  const nested = data && data.fields && typeof data.fields === 'object' && !Array.isArray(data.fields) ? data.fields : {};
  const out = {};
  for (const [k, v] of Object.entries({ ...data, ...nested })) {
    if (RESERVED.has(k) || !KEY.test(k)) continue;
    if (typeof v === 'string') out[k] = v.slice(0, 4000);
    else if (typeof v === 'boolean') out[k] = v;
  }
  return out;
}

/** A signature data URL (PNG or JPEG), or null; `bad` when it is something else. */
function signatureOf(v) {
  if (v === undefined || v === null || v === '') return null;
  if (typeof v !== 'string' || v.length > SIGNATURE_MAX || !/^data:image\/(png|jpeg);base64,[A-Za-z0-9+/=\s]+$/.test(v)) return 'bad';
  return v;
}

/** The person picked: an id, a name, or an object or list holding one. */
function signerOf(v) {
  const one = Array.isArray(v) ? v[0] : v;
  if (one === undefined || one === null || one === '') return null;
  // The web UI's picker sends the id alone (as text): the app has no way to a name then, so it names nobody.
  if (typeof one === 'number' || typeof one === 'string') return { id: one, name: '' };
  if (typeof one === 'object') return { id: one.id ?? null, name: String(one.username ?? one.name ?? one.email ?? one.id ?? '').slice(0, 120) };
  return null;
}

/** Six digits (QuickJS's Math.random: the pages module is what limits PIN guesses). */
const newPin = () => String(Math.floor(Math.random() * 1e6)).padStart(6, '0');

/** The surface, or an error text when the PDF holds something pdf-lib cannot follow (a broken form tree, ...). */
async function safeSurface(input, publicPage) {
  try {
    return await surfaceFor(input, publicPage);
  } catch (e) {
    const key = e && String(e.message).startsWith('error.') ? e.message : 'error.not_a_pdf';
    return { nodes: [{ type: 'text', style: 'error', text: t(input.lang, key) }] };
  }
}

app.view = (input) => safeSurface(input, isPublic(input));

app.event = async (input) => {
  const lang = input.lang;
  if (!(input.event === 'submit' || (input.event === 'action' && input.action_id === 'submit'))) return safeSurface(input, isPublic(input));
  const data = input.data || {};
  // Drawn on the signature pad (`signature`) or in the signature box of the PDF's fields (`fields.signature`).
  const nested = data.fields && typeof data.fields === 'object' ? data.fields.signature : undefined;
  const signature = signatureOf(data.signature || nested);
  if (signature === 'bad') return { errors: [{ key: 'signature', code: 'invalid', reason: t(lang, 'error.signature_invalid') }] };
  if (isPublic(input)) {
    const name = typeof data.signer_name === 'string' ? data.signer_name.trim().slice(0, 120) : '';
    const errors = [];
    if (!signature) errors.push({ key: 'signature', code: 'required', reason: t(lang, 'error.signature_required') });
    if (!name) errors.push({ key: 'signer_name', code: 'required', reason: t(lang, 'error.name_required') });
    if (errors.length) return { errors };
    return {
      job: { action: 'countersign', params: { signature, signer_name: name } },
      surface: { nodes: [{ type: 'text', style: 'success', text: t(lang, 'page.thanks') }] },
    };
  }
  const p = (input.paths || [])[0];
  if (!p) return { nodes: [{ type: 'text', style: 'error', text: t(lang, 'error.no_file') }] };
  const values = valuesOf(data);
  const signer = signerOf(data.signer);
  // Required form fields are checked against the PDF itself (the surface's pdf-fields are not form fields for the host).
  const doc = await load(await readFile(p.path));
  const fields = fieldsOf(doc);
  const errors = fields
    .filter((f) => f.required && f.kind === 'text' && !String(values[f.key] ?? '').trim())
    .map((f) => ({ key: f.key, code: 'required', reason: t(lang, 'error.field_required', { name: f.name }) }));
  for (const f of fields) {
    if (f.kind !== 'text' || typeof values[f.key] !== 'string') continue;
    const max = f.field.getMaxLength();
    if (max !== undefined && values[f.key].length > max)
      errors.push({ key: f.key, code: 'invalid', reason: t(lang, 'error.field_too_long', { name: f.name, max }) });
  }
  if (!signature && !signer) errors.push({ key: 'signature', code: 'required', reason: t(lang, 'error.signature_required') });
  if (errors.length) return { errors };
  const params = { values, ...(signature && { signature }) };
  if (!signer) return { job: { action: 'sign', params }, surface: { nodes: [{ type: 'text', text: t(lang, 'dialog.signing') }] } };
  const pin = newPin();
  return {
    job: { action: 'sign', params: { ...params, signer, pin } },
    surface: {
      title: t(lang, 'request.title'),
      nodes: [
        { type: 'text', text: signer.name ? t(lang, 'request.intro', { who: signer.name }) : t(lang, 'request.intro_someone') },
        { type: 'text', style: 'title', text: t(lang, 'request.pin', { pin }) },
        { type: 'text', style: 'muted', text: t(lang, 'request.pin_once') },
      ],
    },
  };
};

/** Draws a signature image into `box` (aspect ratio kept, centred) with a small dated line under it. */
async function drawSignature(doc, box, dataUrl, caption) {
  const bytes = fromBase64(dataUrl.slice(dataUrl.indexOf(',') + 1));
  const img = dataUrl.startsWith('data:image/png') ? await doc.embedPng(bytes) : await doc.embedJpg(bytes);
  const page = doc.getPage(box.page);
  const scale = Math.min(box.w / img.width, box.h / img.height);
  const w = img.width * scale,
    h = img.height * scale;
  page.drawImage(img, { x: box.x + (box.w - w) / 2, y: box.y + (box.h - h) / 2, width: w, height: h });
  const font = await doc.embedFont(StandardFonts.Helvetica);
  // WinAnsi only: characters Helvetica cannot show become '?'.
  const safe = caption.replace(/[^\x20-\x7e\u00a0-\u00ff]/g, '?');
  page.drawText(safe, { x: box.x, y: Math.max(2, box.y - 10), size: 7, font, color: rgb(0.35, 0.35, 0.35) });
}

/** Saves with fresh field appearances; when a value holds characters the standard font cannot draw, viewers are asked to draw them. */
async function save(doc) {
  try {
    return await doc.save({ objectsPerTick: Infinity });
  } catch {
    doc.getForm().acroForm.dict.set(PDFName.of('NeedAppearances'), PDFBool.True);
    return doc.save({ objectsPerTick: Infinity, updateFieldAppearances: false });
  }
}

/** Calls a host method the service may not offer yet (locks/state): logs and goes on when it is missing. */
async function optional(method, args) {
  try {
    return await call(method, args);
  } catch (e) {
    if (e && e.code === 'unknown_method') {
      console.log(`${method} is not offered by this service; skipped`);
      return null;
    }
    throw e;
  }
}

const today = () => new Date().toISOString().slice(0, 10);

app.action = async (input) => {
  const lang = input.lang;
  const params = input.params || {};
  const p = (input.paths || [])[0];
  if (!p) throw new Error('error.no_file');
  const out = signedPathOf(p);

  if (input.action === 'countersign') {
    const signature = signatureOf(params.signature);
    if (!signature || signature === 'bad') throw new Error('error.signature_required');
    let doc;
    try {
      doc = await load(await readFile(out));
    } catch {
      doc = await load(await readFile(p.path));
    }
    await call('ops.progress', { fraction: 0.3, message: t(lang, 'progress.signing') });
    await drawSignature(
      doc,
      signatureBox(doc, fieldsOf(doc), 1),
      signature,
      `${t('en', 'caption.signed')} ${today()} ${String(params.signer_name || '')}`.trim(),
    );
    const w = await writeFile(out, await save(doc), true);
    await optional('state.set', { path: w.path, key: 'signed', on: true });
    await optional('locks.clear', { path: p.path });
    await optional('state.set', { path: p.path, key: 'awaiting_signature', on: false });
    return { message: t(lang, 'done.countersigned', { name: w.path.slice(w.path.lastIndexOf('/') + 1) }), open: { path: w.path } };
  }

  const doc = await load(await readFile(p.path));
  await call('ops.progress', { fraction: 0.2, message: t(lang, 'progress.filling') });
  const fields = fieldsOf(doc);
  const values = params.values && typeof params.values === 'object' ? params.values : {};
  for (const f of fields) {
    const v = values[f.key];
    if (v === undefined) continue;
    if (f.kind === 'text') {
      try {
        f.field.setText(String(v));
      } catch {
        throw new Error('error.field_value');
      }
    } else if (f.kind === 'checkbox') {
      if (v === true || v === 'true' || v === 'on' || v === 'yes') f.field.check();
      else f.field.uncheck();
    }
  }
  const signature = signatureOf(params.signature);
  if (signature === 'bad') throw new Error('error.signature_invalid');
  if (signature) await drawSignature(doc, signatureBox(doc, fields, 0), signature, `${t('en', 'caption.signed')} ${today()}`);
  await call('ops.progress', { fraction: 0.6, message: t(lang, 'progress.writing') });
  const w = await writeFile(out, await save(doc), true);
  const signer = params.signer && typeof params.signer === 'object' ? params.signer : null;
  if (!signer) {
    await optional('state.set', { path: w.path, key: 'signed', on: true });
    return { message: t(lang, 'done.signed', { name: w.path.slice(w.path.lastIndexOf('/') + 1) }), open: { path: w.path } };
  }
  // Out for signature: the original is locked and marked until the other signer has signed.
  // `label` names the locking app (the host defaults it to the app's name); the words go in `reason_text`.
  await call('locks.set', { path: p.path, reason: 'out_for_signature', reason_text: t(lang, 'lock.label') });
  await call('state.set', { path: p.path, key: 'awaiting_signature', on: true });
  // The page exposes the original (f1: the job's first path) and the copy to sign (f2).
  const page = await call('pages.create', {
    paths: [p.path, w.path],
    page: 'sign',
    pin: String(params.pin || newPin()),
    title: t(lang, 'page.title', { name: p.name }),
  });
  const url = page && page.url ? page.url : '';
  const message = signer.name ? t(lang, 'done.requested', { who: String(signer.name), url }) : t(lang, 'done.requested_someone', { url });
  return { message, open: { path: w.path } };
};
