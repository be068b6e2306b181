/**
 * The picture of a grid tile. Never blank: the type icon shows until the
 * thumbnail has loaded, and again when it fails (or there is none yet: the
 * listing carries `thumb_url` only once it is ready). A loaded thumbnail of
 * anything but an image (a PDF or Word first page, a video frame) is drawn as
 * a framed page with a type badge, so a mostly white first page still reads
 * as "PDF" or "DOCX". The badge comes from the name and MIME type alone, the
 * same for uploads and files a sync found on disk.
 */
import { useState } from 'react';
import type { Entry } from '../api/types';
import { extOf } from '../lib/format';
import { SignedImg } from '../device/signed-src';
import { FileIcon, kindOf } from './icons';

type Load = 'loading' | 'loaded' | 'failed';

export function TileThumb({ e }: { e: Entry }) {
  // The state belongs to one URL: a new URL starts at 'loading' without an effect, which could run after a
  // cached image's load event and put it back to 'loading' for good.
  const [seen, setSeen] = useState<{ url: string | undefined; load: Load } | null>(null);
  const load: Load = seen && seen.url === e.thumb_url ? seen.load : 'loading';
  const setLoad = (l: Load) => setSeen({ url: e.thumb_url, load: l });
  const kind = kindOf(e);
  const shown = !!e.thumb_url && load === 'loaded';
  const page = kind !== 'image' && kind !== 'dir';
  return (
    <div className={`thumb${page ? ' page' : ''}`} data-thumb={e.thumb_url ? load : 'none'}>
      {e.thumb_url && load !== 'failed' ? (
        <SignedImg
          src={e.thumb_url}
          alt=""
          loading="lazy"
          decoding="async"
          className={shown ? 'shown' : undefined}
          onLoad={() => setLoad('loaded')}
          onError={() => setLoad('failed')}
        />
      ) : null}
      {!shown && <FileIcon entry={e} size={56} />}
      {shown && page && (
        <span className="tile-badge" data-testid="tile-badge" aria-hidden="true">
          <FileIcon entry={e} size={14} />
          {(extOf(e.name) || kind).toUpperCase().slice(0, 5)}
        </span>
      )}
    </div>
  );
}
