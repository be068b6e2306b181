/**
 * Puts an image on a PDF page of its own size (1 pixel = 1 point, scaled down
 * only past the PDF's 14,400 pt page limit).
 *
 * JPEG: pdf-lib's embedJpg (the JPEG bytes are stored as they are).
 * PNG: an 8-bit grey or RGB PNG without transparency or interlacing is stored
 * as its own zlib data (PDF's FlateDecode with the PNG predictors), so it is
 * neither decoded nor compressed again: in QuickJS pdf-lib's embedPng (decode
 * with UPNG, deflate again with pako) took 2.9 s for a 1200x900 PNG. Every
 * other PNG (alpha, palette, 16-bit, interlaced) goes through embedPng.
 */
import { PDFName, concatTransformationMatrix, drawObject, popGraphicsState, pushGraphicsState } from 'pdf-lib';

const MAX_PT = 14400;

export function kindOf(bytes) {
  if (bytes.length > 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpg';
  if (bytes.length > 8 && bytes[0] === 0x89 && bytes[1] === 0x50 && bytes[2] === 0x4e && bytes[3] === 0x47) return 'png';
  return null;
}

const u32 = (b, i) => ((b[i] << 24) | (b[i + 1] << 16) | (b[i + 2] << 8) | b[i + 3]) >>> 0;

/** The zlib data and header of a PNG the fast path can take, or null. */
function simplePng(b) {
  let i = 8;
  let head = null;
  const idat = [];
  let total = 0;
  while (i + 8 <= b.length) {
    const len = u32(b, i);
    const type = String.fromCharCode(b[i + 4], b[i + 5], b[i + 6], b[i + 7]);
    const start = i + 8;
    if (start + len > b.length) return null;
    if (type === 'IHDR') head = { w: u32(b, start), h: u32(b, start + 4), depth: b[start + 8], color: b[start + 9], interlace: b[start + 12] };
    else if (type === 'tRNS') return null;
    else if (type === 'IDAT') {
      idat.push(b.subarray(start, start + len));
      total += len;
    } else if (type === 'IEND') break;
    i = start + len + 4;
  }
  if (!head || !idat.length || head.depth !== 8 || head.interlace !== 0 || (head.color !== 0 && head.color !== 2)) return null;
  const data = new Uint8Array(total);
  let at = 0;
  for (const part of idat) {
    data.set(part, at);
    at += part.length;
  }
  return { ...head, data };
}

/** Adds one page holding the image; returns its size in points. */
export async function addImagePage(doc, bytes) {
  const kind = kindOf(bytes);
  if (!kind) throw new Error('error.not_an_image');
  let w, h, name;
  const page = doc.addPage([1, 1]);
  const fast = kind === 'png' ? simplePng(bytes) : null;
  if (fast) {
    const colors = fast.color === 2 ? 3 : 1;
    const stream = doc.context.stream(fast.data, {
      Type: 'XObject',
      Subtype: 'Image',
      Width: fast.w,
      Height: fast.h,
      BitsPerComponent: 8,
      ColorSpace: colors === 3 ? 'DeviceRGB' : 'DeviceGray',
      Filter: 'FlateDecode',
      DecodeParms: { Predictor: 15, Colors: colors, BitsPerComponent: 8, Columns: fast.w },
    });
    name = page.node.newXObject('Image', doc.context.register(stream));
    w = fast.w;
    h = fast.h;
  } else {
    const img = kind === 'jpg' ? await doc.embedJpg(bytes) : await doc.embedPng(bytes);
    name = page.node.newXObject('Image', img.ref);
    w = img.width;
    h = img.height;
  }
  if (!(w > 0 && h > 0)) throw new Error('error.not_an_image');
  const scale = Math.min(1, MAX_PT / Math.max(w, h));
  const pw = w * scale,
    ph = h * scale;
  page.setSize(pw, ph);
  page.pushOperators(
    pushGraphicsState(),
    concatTransformationMatrix(pw, 0, 0, ph, 0, 0),
    drawObject(name instanceof PDFName ? name : PDFName.of(String(name))),
    popGraphicsState(),
  );
  return { width: pw, height: ph };
}
