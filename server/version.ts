import pkg from '../package.json';

/** The running version, from package.json (bundled at build time). */
export const VERSION: string = pkg.version;
