/** Light and dark themes: a `data-theme` attribute on <html> switches the CSS variables. */
export type Theme = 'light' | 'dark';

export function currentTheme(): Theme {
  return document.documentElement.dataset.theme === 'dark' ? 'dark' : 'light';
}

/** Applies and remembers the theme (index.html re-applies it before first paint). */
export function setTheme(t: Theme): void {
  document.documentElement.dataset.theme = t;
  try {
    localStorage.setItem('filedock.theme', t);
  } catch {
    // Private mode: the choice lasts for this page only.
  }
}
