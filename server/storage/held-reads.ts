/**
 * A stream a driver's `read` returns is often held a while before anyone
 * consumes it: a copy opens the target (a session folder, a temp file, an
 * upload) first. An abort or a backend failure in that window destroys the
 * stream with an error while it has no 'error' listener, and Node ends the
 * process on that. Each read stream therefore gets one listener that keeps
 * the process alive; consumers (`pipeline`, `for await`) attach their own
 * and still see the error as before.
 */
import type { StorageDriver } from './types';

const survive = (): void => undefined;

/** Wraps `driver.read` in place (drivers are classes with optional methods: the instance is kept). */
export function heldReadsSafe(driver: StorageDriver): StorageDriver {
  const read = driver.read;
  driver.read = async (rel, range, signal) => {
    const stream = await read.call(driver, rel, range, signal);
    stream.on('error', survive);
    return stream;
  };
  return driver;
}
