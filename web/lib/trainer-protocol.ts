// What the trainer's Worker and its session say to each other.
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

/** An Error with the one 'createTrainer: ' prefix, whether or not the engine's message has it. */
export const trainerError = (message: string): Error =>
  new Error(message.startsWith('createTrainer: ') ? message : `createTrainer: ${message}`);
