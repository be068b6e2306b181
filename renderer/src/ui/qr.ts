/** QR codes as data URLs; the `qrcode` library is its own chunk, loaded on the first code shown. */
import { useEffect, useState } from 'react';

/** A QR code of `text` (`width` px), or null while the library loads or when it fails. */
export function useQrCode(text: string | null, width: number): string | null {
  const [qr, setQr] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    setQr(null);
    if (text)
      import('qrcode')
        .then((m) => (m.default ?? m).toDataURL(text, { margin: 1, width }))
        .then(
          (d) => live && setQr(d),
          () => {},
        );
    return () => {
      live = false;
    };
  }, [text, width]);
  return qr;
}
