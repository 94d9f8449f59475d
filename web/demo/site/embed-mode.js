// The one classic script of the site, parser-blocking, first in every page's <body> before the
// header it hides (put there by static-header.ts): an embedded view (#embed=1, read as
// site/shell.ts reads it) must not show the site header that the page's HTML holds, and only a
// script can read the URL's hash. The pages' own module scripts run too late for that: after the
// first paint. The Content-Security-Policy allows no inline script, hence a file.
if (new URLSearchParams(location.hash.replace(/^#/, '')).get('embed') === '1') document.documentElement.classList.add('embed');
