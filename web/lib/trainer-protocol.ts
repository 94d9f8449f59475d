// What the trainer's Worker and its session say to each other, and a Node built-in getter both
// sides use (no static `node:` import, so browser bundles never see one).
import type { TrainerProgress, TrainerResult, TrainerTick } from './trainer-core.js';
import type { CheckedTrainerOptions } from './trainer-options.js';

export type TrainerMessage =
  | { type: 'ready' }
  | { type: 'tick'; tick: TrainerTick }
  | { type: 'progress'; progress: TrainerProgress }
  | { type: 'done'; result: TrainerResult }
  | { type: 'error'; message: string };

/** `relaxed`: the session's instance runs a relaxed-SIMD build, so the Worker may too (same rounding). */
export type TrainerRequest = { type: 'start'; options: CheckedTrainerOptions; relaxed: boolean };

export function nodeModule<T>(id: string): T {
  const get = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule;
  if (!get) throw new Error('createTrainer: a worker thread needs Node >= 20.16 (process.getBuiltinModule)');
  return get(id) as T;
}

/** An Error with the one 'createTrainer: ' prefix, whether or not the engine's message has it. */
export const trainerError = (message: string): Error =>
  new Error(message.startsWith('createTrainer: ') ? message : `createTrainer: ${message}`);
