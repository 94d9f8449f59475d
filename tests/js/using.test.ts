// `using` as a TypeScript consumer writes it: the consumer below type-checks under `strict`
// against the built .d.ts (Attnlab, Translator and TrainerSession are Disposable), is lowered by
// ts.transpileModule to ES2022 (which turns `using` into try/finally calls of [Symbol.dispose]),
// and runs in Node; every `using` block must dispose what it declared, also when it throws.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../..');

const consumer = `
import { load, type Attnlab, type Translator } from 'attnlab';

const q = { data: new Float32Array(2 * 3 * 4).fill(0.25), shape: [2, 3, 4] };
const tryCall = (f: () => unknown): string => {
  try {
    f();
    return 'no error';
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
};

let outerLib: Attnlab | undefined;
let outerTr: Translator | undefined;
const seen: Record<string, unknown> = {};
{
  using lib = await load({ variant: 'simd' });
  outerLib = lib;
  seen.shape = lib.attention(q, q, q, { causal: true }).output.shape;
  {
    using tr = await lib.loadTranslator('fra-eng', { arch: 'gru' });
    outerTr = tr;
    seen.translated = tr.translate('Il fait beau.').text.length > 0;
  }
  let trainerDone: Promise<{ reason: string }> | undefined;
  {
    using session = lib.createTrainer({ worker: false, maxSeconds: 30 });
    trainerDone = session.done;
  }
  seen.trainerReason = (await trainerDone).reason;
  // The inner blocks have ended: the translator and the trainer are gone, the instance is not.
  seen.trDisposedAfterInnerBlock = outerTr.disposed;
  seen.libAliveAfterInnerBlock = !lib.disposed;
}
seen.libDisposed = outerLib.disposed;
seen.libCall = tryCall(() => outerLib!.attention(q, q, q));
seen.trCall = tryCall(() => outerTr!.translate('Il fait beau.'));

// A block left by an exception disposes too.
let thrown: Attnlab | undefined;
try {
  using lib = await load({ variant: 'scalar' });
  thrown = lib;
  throw new Error('boom');
} catch (e) {
  seen.rethrown = (e as Error).message;
}
seen.disposedOnThrow = thrown!.disposed;

console.log(JSON.stringify(seen));
`;

let dir: string;
beforeAll(() => {
  // Inside the checkout so that 'attnlab' resolves to it (its package.json exports), as it would
  // from node_modules.
  mkdirSync(join(root, 'build'), { recursive: true });
  dir = mkdtempSync(join(root, 'build', 'using-'));
  writeFileSync(join(dir, 'consumer.ts'), consumer);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('`using` from TypeScript', () => {
  it('the consumer type-checks under strict: Attnlab, Translator and TrainerSession are Disposable', () => {
    const program = ts.createProgram([join(dir, 'consumer.ts')], {
      strict: true, noEmit: true, skipLibCheck: false, types: [],
      target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext,
      lib: ['lib.es2022.d.ts', 'lib.esnext.disposable.d.ts', 'lib.dom.d.ts'],
    });
    const diagnostics = ts.getPreEmitDiagnostics(program).map((d) =>
      `${d.file ? `${d.file.fileName}: ` : ''}${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
    expect(diagnostics).toEqual([]);
  }, 120_000);

  it('a Node-only project (no DOM library, @types/node) type-checks against the published types', () => {
    writeFileSync(join(dir, 'node-only.ts'), `
import { load, loadModel } from 'attnlab';
using lib = await load();
const model = await loadModel('./checkpoint/');
const { attentions } = await model.forward('hello', { attentions: true });
console.log(lib.variant, attentions.shape);
`);
    const program = ts.createProgram([join(dir, 'node-only.ts')], {
      strict: true, noEmit: true, skipLibCheck: false, types: ['node'], typeRoots: [join(root, 'node_modules/@types')],
      target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext,
      lib: ['lib.es2022.d.ts', 'lib.esnext.disposable.d.ts'],
    });
    const diagnostics = ts.getPreEmitDiagnostics(program).map((d) =>
      `${d.file ? `${d.file.fileName}: ` : ''}${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
    expect(diagnostics).toEqual([]);
  }, 120_000);

  it('lowered to ES2022 by ts.transpileModule, it runs and every `using` block disposes', () => {
    const { outputText } = ts.transpileModule(consumer, {
      compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext },
    });
    // ES2022 has no `using`: TypeScript lowered it to its dispose helpers.
    expect(outputText).not.toMatch(/\busing lib\b/);
    expect(outputText).toContain('__addDisposableResource');
    const file = join(dir, 'consumer.mjs');
    writeFileSync(file, outputText);
    const out = execFileSync(process.execPath, [file], { encoding: 'utf8', timeout: 60_000 });
    expect(JSON.parse(out)).toEqual({
      shape: [2, 3, 4],
      translated: true,
      trainerReason: 'cancelled',
      trDisposedAfterInnerBlock: true,
      libAliveAfterInnerBlock: true,
      libDisposed: true,
      libCall: 'attention: this attnlab instance has been disposed; call load() for a new one',
      trCall: 'translate: this translator has been disposed; call lib.loadTranslator() for a new one',
      rethrown: 'boom',
      disposedOnThrow: true,
    });
  }, 120_000);
});
