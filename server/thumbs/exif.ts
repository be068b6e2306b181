/**
 * The thumbnail a camera embeds in a JPEG's EXIF block (IFD1), found in the
 * first bytes of the file: for a photo on a remote storage one ranged read of
 * the head is enough, instead of fetching megabytes.
 */

/** The embedded JPEG thumbnail in `head` (the start of a JPEG file), or null when there is none or it lies beyond `head`. */
export function exifThumbnail(head: Buffer): Buffer | null {
  if (head.length < 4 || head.readUInt16BE(0) !== 0xffd8) return null;
  let pos = 2;
  while (pos + 4 <= head.length) {
    if (head[pos] !== 0xff) return null;
    const marker = head[pos + 1];
    const len = head.readUInt16BE(pos + 2);
    if (marker === 0xda || marker === 0xd9) return null; // image data starts: no EXIF before it
    if (marker === 0xe1 && head.toString('latin1', pos + 4, pos + 10) === 'Exif\0\0') return fromTiff(head, pos + 10, pos + 2 + len);
    pos += 2 + len;
  }
  return null;
}

function fromTiff(buf: Buffer, tiff: number, end: number): Buffer | null {
  if (end > buf.length || tiff + 8 > end) return null;
  const le = buf.toString('latin1', tiff, tiff + 2) === 'II';
  const u16 = (o: number) => (le ? buf.readUInt16LE(o) : buf.readUInt16BE(o));
  const u32 = (o: number) => (le ? buf.readUInt32LE(o) : buf.readUInt32BE(o));
  const ifd0 = tiff + u32(tiff + 4);
  if (ifd0 + 2 > end) return null;
  const ifd1Ptr = ifd0 + 2 + u16(ifd0) * 12;
  if (ifd1Ptr + 4 > end) return null;
  const ifd1Off = u32(ifd1Ptr);
  if (ifd1Off === 0) return null;
  const ifd1 = tiff + ifd1Off;
  if (ifd1 + 2 > end) return null;
  let offset = 0;
  let length = 0;
  for (let i = 0, n = u16(ifd1); i < n; i++) {
    const e = ifd1 + 2 + i * 12;
    if (e + 12 > end) return null;
    const tag = u16(e);
    if (tag === 0x0201) offset = u32(e + 8);
    else if (tag === 0x0202) length = u32(e + 8);
  }
  const start = tiff + offset;
  if (!offset || !length || start + length > end) return null;
  const jpeg = buf.subarray(start, start + length);
  return jpeg.length > 2 && jpeg.readUInt16BE(0) === 0xffd8 ? Buffer.from(jpeg) : null;
}
