/** Each model's file: `models[direction][arch]`, a URL for `lib.loadTranslator(url)`. */
export declare const models: {
  readonly 'fra-eng': { readonly gru: URL; readonly transformer: URL };
  readonly 'eng-fra': { readonly gru: URL; readonly transformer: URL };
};
