/**
 * Browser-native loads (an <img>, a <video>, a download link) cannot carry an
 * Authorization header. Without a device key they use the URL as it is (the
 * cookie authorises it); in device mode the bytes are fetched with the key
 * and shown or saved from a blob URL.
 */
import { useEffect, useState, type ImgHTMLAttributes } from 'react';
import { fetchSigned, toApiError } from '../api/client';
import { deviceKey } from './device-key';
import { withBase } from '../lib/base';

/** `url` as it is without a device key; in device mode a blob URL of its bytes once fetched (undefined meanwhile and on failure). */
export function useSignedSrc(url: string | undefined): string | undefined {
  const keyed = !!url && deviceKey() !== null;
  const [blob, setBlob] = useState<string>();
  useEffect(() => {
    if (!keyed) return;
    const ctrl = new AbortController();
    let made: string | undefined;
    setBlob(undefined);
    fetchSigned(url!, { signal: ctrl.signal })
      .then(async (r) => {
        if (!r.ok) return;
        const b = await r.blob();
        if (ctrl.signal.aborted) return;
        made = URL.createObjectURL(b);
        setBlob(made);
      })
      .catch(() => {});
    return () => {
      ctrl.abort();
      if (made) URL.revokeObjectURL(made);
    };
  }, [url, keyed]);
  return keyed ? blob : url && withBase(url);
}

/** An <img> whose source is loaded with the device key when one is stored; nothing until it has bytes. */
export function SignedImg({ src, ...rest }: ImgHTMLAttributes<HTMLImageElement> & { src: string }) {
  const s = useSignedSrc(src);
  return s ? <img src={s} {...rest} /> : null;
}

/** The file name a `Content-Disposition` header gives, or ''. */
export function dispositionName(header: string | null): string {
  if (!header) return '';
  const star = /filename\*\s*=\s*UTF-8''([^;]+)/i.exec(header);
  if (star) {
    try {
      return decodeURIComponent(star[1].trim());
    } catch {
      // Fall through to the plain name.
    }
  }
  return /filename\s*=\s*"?([^";]+)"?/i.exec(header)?.[1].trim() ?? '';
}

/**
 * Saves `url` as a download named `name` ('' lets the server name it): a plain
 * link click, or in device mode the bytes fetched with the key first (held in
 * memory, so very large downloads are better made from a signed-in browser).
 * Rejects with ApiError when the server refuses.
 */
export async function saveSigned(url: string, name: string): Promise<void> {
  let href = withBase(url);
  let as = name;
  if (deviceKey()) {
    const r = await fetchSigned(url);
    if (!r.ok) throw await toApiError(r);
    as ||= dispositionName(r.headers.get('Content-Disposition'));
    href = URL.createObjectURL(await r.blob());
    setTimeout(() => URL.revokeObjectURL(href), 60_000);
  }
  const a = document.createElement('a');
  a.href = href;
  a.download = as;
  a.click();
}
