// createTrainer()'s options, checked on the calling thread before anything starts, so a bad value
// throws there (the project's `createTrainer: option: expected …, got …`) and never reaches the
// Worker or the C++ engine. The ranges are the engine's own (cpp/src/nn/trainer.cpp).
import { argError } from './errors.js';
import { checkBool, checkOneOf, checkOptions } from './tensor.js';
import type { TrainerOptions, TrainerProgress, TrainerTask } from './trainer-core.js';

export type TrainerArch = NonNullable<TrainerOptions['arch']>;
export type CheckedTrainerOptions = Required<TrainerOptions>;

const FN = 'createTrainer';
const TASKS: readonly TrainerTask[] = ['reverse', 'sort', 'copy'];
const ARCHS: readonly TrainerArch[] = ['gru', 'gru-luong', 'transformer'];
const TRAINING = ['task', 'arch', 'hidden', 'symbols', 'minLength', 'maxLength', 'batch', 'lr', 'seed', 'maxSeconds',
  'targetAccuracy', 'evalEvery', 'evalSize'] as const;

function int(name: string, x: unknown, fallback: number, min: number, max: number, what = `an integer in [${min}, ${max}]`): number {
  if (x === undefined) return fallback;
  if (typeof x !== 'number' || !Number.isSafeInteger(x) || x < min || x > max) throw argError(FN, `options.${name}`, what, x);
  return x;
}

function num(name: string, x: unknown, fallback: number, ok: (v: number) => boolean, what: string): number {
  if (x === undefined) return fallback;
  if (typeof x !== 'number' || Number.isNaN(x) || !ok(x)) throw argError(FN, `options.${name}`, what, x);
  return x;
}

/** Every training option with its default filled in, plus onProgress and worker. */
export function checkTrainerOptions(options: unknown): {
  training: CheckedTrainerOptions;
  onProgress: ((p: TrainerProgress) => void) | undefined;
  worker: boolean | undefined;
} {
  const o = checkOptions(FN, 'options', options, [...TRAINING, 'onProgress', 'worker']);
  if (o.onProgress !== undefined && typeof o.onProgress !== 'function') throw argError(FN, 'options.onProgress', 'a function', o.onProgress);
  const worker = o.worker === undefined ? undefined : checkBool(FN, 'options.worker', o.worker, false);
  const minLength = int('minLength', o.minLength, 3, 1, 30);
  const training: CheckedTrainerOptions = {
    task: checkOneOf(FN, 'options.task', o.task, TASKS, 'reverse'),
    arch: checkOneOf(FN, 'options.arch', o.arch, ARCHS, 'gru'),
    hidden: int('hidden', o.hidden, 64, 4, 512, 'a multiple of 4 in [4, 512]'),
    symbols: int('symbols', o.symbols, 8, 2, 26),
    minLength,
    maxLength: int('maxLength', o.maxLength, Math.max(6, minLength), minLength, 30, `an integer in [minLength = ${minLength}, 30]`),
    batch: int('batch', o.batch, 32, 1, 512),
    lr: num('lr', o.lr, 3e-3, (v) => v > 0 && Number.isFinite(v), 'a finite number > 0'),
    seed: int('seed', o.seed, 1, 0, 2 ** 31 - 1),
    maxSeconds: num('maxSeconds', o.maxSeconds, 60, (v) => v > 0, 'a number of seconds > 0 (Infinity: no limit)'),
    targetAccuracy: num('targetAccuracy', o.targetAccuracy, 0.95, (v) => v >= 0 && v <= 1, 'a number in [0, 1]'),
    evalEvery: int('evalEvery', o.evalEvery, 50, 1, 1_000_000),
    evalSize: int('evalSize', o.evalSize, 200, 1, 100_000),
  };
  if (training.hidden % 4 !== 0) throw argError(FN, 'options.hidden', 'a multiple of 4 in [4, 512]', training.hidden);
  return { training, onProgress: o.onProgress as ((p: TrainerProgress) => void) | undefined, worker };
}
