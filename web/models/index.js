// The four models' files, as URLs next to this module. Literal `new URL('./….atl', import.meta.url)`
// so bundlers (Vite, webpack) ship each file as an asset; in Node they are file: URLs.
// attnlab's loadTranslator('fra-eng', { arch }) imports this module itself in Node; in a bundled
// app or a page, pass a URL from here: lib.loadTranslator(models['fra-eng'].transformer).
export const models = {
  'fra-eng': {
    gru: new URL('./fra-eng-gru.atl', import.meta.url),
    transformer: new URL('./fra-eng-transformer.atl', import.meta.url),
  },
  'eng-fra': {
    gru: new URL('./eng-fra-gru.atl', import.meta.url),
    transformer: new URL('./eng-fra-transformer.atl', import.meta.url),
  },
};
