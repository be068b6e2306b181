/**
 * The read-only decorator: a storage marked read-only refuses every change at
 * the driver itself (`read_only`), whichever door or job asks, so nothing that
 * forgot to check the flag can write there. Reads pass through untouched.
 */
import { AppError } from '../errors';
import type { DriverDecorator, MultipartCapability, StorageDriver } from './types';

/** `isReadOnly(uid)` is asked at each change, so toggling the flag applies without rebuilding the driver. */
export function readOnlyDecorator(isReadOnly: (uid: string) => boolean): DriverDecorator {
  return {
    name: 'read-only',
    wrap(driver: StorageDriver, uid: string): StorageDriver {
      const guard =
        <A extends unknown[], R>(fn: (...a: A) => Promise<R>) =>
        async (...a: A): Promise<R> => {
          if (isReadOnly(uid)) throw new AppError('read_only');
          return fn(...a);
        };
      const d: StorageDriver = {
        stat: (p) => driver.stat(p),
        list: (p) => driver.list(p),
        read: (p, r, s) => driver.read(p, r, s),
        write: guard((p, b, o) => driver.write(p, b, o)),
        mkdir: guard((p) => driver.mkdir(p)),
        delete: guard((p) => driver.delete(p)),
        close: () => driver.close(),
      };
      const { walk, move, copy, presignGet, multipart, watch, localPath, statLocal } = driver;
      if (walk) d.walk = (p, s) => walk.call(driver, p, s);
      if (move) d.move = guard((f, t, o) => move.call(driver, f, t, o));
      if (copy) d.copy = guard((f, t, o) => copy.call(driver, f, t, o));
      if (presignGet) d.presignGet = (p, o) => presignGet.call(driver, p, o);
      if (watch) d.watch = (l) => watch.call(driver, l);
      if (localPath) d.localPath = (p) => localPath.call(driver, p);
      if (statLocal) d.statLocal = (p, o) => statLocal.call(driver, p, o);
      if (multipart) d.multipart = guardedMultipart(multipart, guard);
      return d;
    },
  };
}

function guardedMultipart(
  m: MultipartCapability,
  guard: <A extends unknown[], R>(fn: (...a: A) => Promise<R>) => (...a: A) => Promise<R>,
): MultipartCapability {
  const out: MultipartCapability = {
    presigned: m.presigned,
    init: guard((p, o) => m.init(p, o)),
    putPart: guard((h, n, b, s, sig) => m.putPart(h, n, b, s, sig)),
    complete: guard((h, parts) => m.complete(h, parts)),
    abort: (h) => m.abort(h),
  };
  const { presignPart } = m;
  if (presignPart) out.presignPart = (h, n, e) => presignPart.call(m, h, n, e);
  return out;
}
