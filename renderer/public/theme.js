// Applied before first paint so a dark-theme user never sees a light flash. A file, not an inline
// script: the app page's Content-Security-Policy allows scripts from this origin only.
try {
  document.documentElement.dataset.theme = localStorage.getItem('filedock.theme') || (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light');
} catch {}
