/**
 * The request meter at the driver boundary: metered backends (everything but
 * `local`) bill or rate-limit per request, so each call is counted by class
 * for the daily budget and the cost estimate. Counting is one callback into a
 * map increment; persisting is the sink's business (batched, never per call).
 *
 * A driver that sees its real wire requests (s3: one count per HTTP attempt,
 * so a 10,000-key walk is its 10 LIST pages) sets `selfMetered` and counts
 * through `DriverContext.countRequest`; the decorator then leaves it alone.
 * Other drivers are counted here, one request per call: list/walk → LIST,
 * stat → HEAD, read → GET, every change → PUT (counted, never budgeted).
 */
import type { MultipartCapability, StorageDriver } from './types';

export type RequestClass = 'list' | 'head' | 'get' | 'put';
export type RequestSink = (cls: RequestClass) => void;

/**
 * Wraps `driver` so each call reports to `sink`; the manager applies it
 * innermost (before read-only and replication) to metered storages only.
 */
export function metered(driver: StorageDriver, sink: RequestSink): StorageDriver {
  if (driver.selfMetered) return driver;
  const count =
    <A extends unknown[], R>(cls: RequestClass, fn: (...a: A) => R) =>
    (...a: A): R => {
      sink(cls);
      return fn(...a);
    };
  const d: StorageDriver = {
    stat: count('head', (p) => driver.stat(p)),
    list: count('list', (p) => driver.list(p)),
    read: count('get', (p, r, s) => driver.read(p, r, s)),
    write: count('put', (p, b, o) => driver.write(p, b, o)),
    mkdir: count('put', (p) => driver.mkdir(p)),
    delete: count('put', (p) => driver.delete(p)),
    close: () => driver.close(),
  };
  const { walk, move, copy, presignGet, multipart, watch, localPath, statLocal } = driver;
  if (walk) d.walk = count('list', (p, s) => walk.call(driver, p, s));
  if (move) d.move = count('put', (f, t, o) => move.call(driver, f, t, o));
  if (copy) d.copy = count('put', (f, t, o) => copy.call(driver, f, t, o));
  // Signing a URL costs no request; the client's GET goes straight to the backend, unseen.
  if (presignGet) d.presignGet = (p, o) => presignGet.call(driver, p, o);
  if (watch) d.watch = (l) => watch.call(driver, l);
  if (localPath) d.localPath = (p) => localPath.call(driver, p);
  if (statLocal) d.statLocal = count('head', (p, o) => statLocal.call(driver, p, o));
  if (multipart) d.multipart = meteredMultipart(multipart, () => sink('put'));
  return d;
}

function meteredMultipart(m: MultipartCapability, put: () => void): MultipartCapability {
  const out: MultipartCapability = {
    presigned: m.presigned,
    init: (p, o) => (put(), m.init(p, o)),
    putPart: (h, n, b, s, sig) => (put(), m.putPart(h, n, b, s, sig)),
    complete: (h, parts) => (put(), m.complete(h, parts)),
    abort: (h) => (put(), m.abort(h)),
  };
  const { presignPart } = m;
  if (presignPart) out.presignPart = (h, n, e) => presignPart.call(m, h, n, e);
  return out;
}
