// The one classic script of the site, parser-blocking, first in every page's <body> before the
// header (put there by static-header.ts): what must hold from the first paint and only a script
// can read. An embedded view (#embed=1, read as site/shell.ts reads it) must not show the site
// header that the page's HTML holds (site.css hides it); a theme chosen (the hash's `theme`, then
// the visitor's kept choice: shell.ts's initialTheme and THEME_KEY) must not paint the system's
// first. The pages' own module scripts run after the first paint. The Content-Security-Policy
// allows no inline script, hence a file.
(() => {
  const hash = new URLSearchParams(location.hash.replace(/^#/, ''));
  if (hash.get('embed') === '1') document.documentElement.classList.add('embed');
  let theme = hash.get('theme');
  if (theme !== 'light' && theme !== 'dark') {
    try {
      theme = localStorage.getItem('attnlab-theme');
    } catch {
      theme = null;  // storage may be blocked in an iframe
    }
  }
  if (theme === 'light' || theme === 'dark') document.documentElement.dataset.theme = theme;
})();
