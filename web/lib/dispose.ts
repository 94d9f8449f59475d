// `using` support: Attnlab and Translator implement Disposable, for JavaScript and for TypeScript.
//
// The key is the engine's Symbol.dispose where it has one (Node >= 20, current browsers), else
// Symbol.for('Symbol.dispose'), which is what TypeScript's and Babel's lowered `using` look up
// once a polyfill has set Symbol.dispose to it. Typed as `typeof Symbol.dispose` so the
// published .d.ts says `[Symbol.dispose](): void` and `using lib = await load()` type-checks
// under `strict`; the global declaration below (the same one @types/node carries) makes that
// hold for consumers whose `lib` lacks "esnext.disposable" (it merges with it when present).

declare global {
  interface SymbolConstructor {
    /** The method `using` calls at the end of its block. */
    readonly dispose: unique symbol;
  }
}

export const disposeSymbol: typeof Symbol.dispose =
  ((Symbol as { dispose?: symbol }).dispose ?? Symbol.for('Symbol.dispose')) as typeof Symbol.dispose;
