import { isAppError } from '../errors';

/** Why a file's text could not be had: recorded as the extraction's reason, never thrown past the drain. */
export class ExtractError extends Error {
  /** Not a failure of the file: it is out of bounds or has no text to give (recorded as `skipped`). */
  readonly skip: boolean;

  constructor(message: string, o: { skip?: boolean } = {}) {
    super(message);
    this.skip = !!o.skip;
  }

  /** A failure of a reader below (the ZIP reader's `archive_invalid`, a tool's exit) as a sentence under `context`. */
  static from(e: unknown, context: string): ExtractError {
    if (e instanceof ExtractError) return e;
    if (isAppError(e)) {
      const reason = e.params?.reason;
      return new ExtractError(`${context}: ${e.code}${reason ? ` (${String(reason)})` : ''}`);
    }
    return new ExtractError(`${context}: ${(e as Error)?.message ?? String(e)}`);
  }
}
