/**
 * Replication rule globs: `*` matches within one path segment, `**` (a whole
 * segment) spans any number of segments, `?` one character of a segment.
 * Everything else is literal. Patterns are matched against
 * `<storage name>/<relative path>` (a leading `/` is ignored), so `Photos/**`
 * is everything in the storage named Photos and `** /*.tmp` (no space) every
 * `.tmp` file anywhere.
 */

/** Why `pattern` is not a valid glob, or null when it is. */
export function globProblem(pattern: string): string | null {
  const p = pattern.replace(/^\/+/, '');
  if (!p.trim()) return 'is empty';
  if (p.length > 1024) return 'is longer than 1024 characters';
  if (/[\u0000-\u001f\u007f\\]/.test(p)) return 'contains a control character or a backslash';
  if (/[[\]{}]/.test(p)) return 'uses [ ] or { }, which are not supported (only *, ** and ?)';
  const segs = p.split('/');
  for (const s of segs) {
    if (s === '') return 'has an empty segment (//)';
    if (s === '.' || s === '..') return 'has a . or .. segment';
    if (s.includes('**') && s !== '**') return '** must be a whole segment';
  }
  return null;
}

/** Compiles a valid glob (see globProblem) to an anchored RegExp. */
export function compileGlob(pattern: string): RegExp {
  const segs = pattern.replace(/^\/+/, '').split('/');
  let re = '';
  segs.forEach((s, i) => {
    const last = i === segs.length - 1;
    if (s === '**') {
      re += last ? '.*' : '(?:[^/]+/)*';
      return;
    }
    re +=
      s
        .replace(/[.+^$()|]/g, '\\$&')
        .replace(/\*/g, '[^/]*')
        .replace(/\?/g, '[^/]') + (last ? '' : '/');
  });
  return new RegExp(`^${re}$`);
}
