/** The app's one upload queue, and a hook that re-renders at most once a frame while bytes flow. */
import { useEffect, useState } from 'react';
import { httpTransport, localPendingStore } from './http-transport';
import { UploadQueue } from './upload-queue';

export const uploads = new UploadQueue(httpTransport, localPendingStore);

if (typeof window !== 'undefined') window.addEventListener('online', () => uploads.online());

export function useUploads(): number {
  const [v, setV] = useState(uploads.getVersion());
  useEffect(() => {
    let raf = 0;
    const off = uploads.subscribe(() => {
      if (!raf)
        raf = requestAnimationFrame(() => {
          raf = 0;
          setV(uploads.getVersion());
        });
    });
    return () => {
      off();
      cancelAnimationFrame(raf);
    };
  }, []);
  return v;
}
