// The training loop behind createTrainer(), shared by the Worker and the in-thread fallback.
import type { WasmModule } from './wasm-module.js';

export type TrainerTask = 'reverse' | 'sort' | 'copy';

export interface TrainerOptions {
  /** The toy task: reverse, sort or copy a random sequence of letters. Default 'reverse'. */
  task?: TrainerTask;
  /** Default 'gru' (Bahdanau attention); 'gru-luong' or 'transformer' also train. */
  arch?: 'gru' | 'gru-luong' | 'transformer';
  /** Hidden size (multiple of 4). Default 64. */
  hidden?: number;
  /** Alphabet size (letters a..). Default 8. */
  symbols?: number;
  minLength?: number;
  maxLength?: number;
  batch?: number;
  lr?: number;
  seed?: number;
  /** Stop after this long. Default 60. */
  maxSeconds?: number;
  /** Stop once exact match on held-out sequences reaches this. Default 0.95. */
  targetAccuracy?: number;
  /** Steps between evaluations (and progress events). Default 50. */
  evalEvery?: number;
  /** Held-out sequences per evaluation. Default 200. */
  evalSize?: number;
}

export interface TrainerExample {
  source: string[];
  target: string[];
  output: string[];
  /** Cross-attention [output.length, source.length] (head-averaged, last layer). */
  attention: number[];
}

export interface TrainerProgress {
  step: number;
  loss: number;
  exactMatch: number;
  elapsedMs: number;
  tokensPerSecond: number;
  example: TrainerExample | null;
}

export interface TrainerResult extends TrainerProgress {
  reason: 'target' | 'time' | 'cancelled';
}

function parse<T>(json: string): T {
  const r = JSON.parse(json) as { error?: string };
  if (r.error) throw new Error(`createTrainer: ${r.error}`);
  return r as T;
}

const ARCH = { gru: 0, 'gru-luong': 1, transformer: 2 } as const;

export async function runTraining(m: WasmModule, o: TrainerOptions, emit: (p: TrainerProgress) => void,
  cancelled: () => boolean): Promise<TrainerResult> {
  const arch = o.arch ?? 'gru';
  if (!(arch in ARCH)) throw new Error(`createTrainer: arch: expected 'gru', 'gru-luong' or 'transformer', got ${String(arch)}`);
  const { id } = parse<{ id: number }>(m.trainerCreate(o.task ?? 'reverse', ARCH[arch], o.hidden ?? 64, o.symbols ?? 8,
    o.minLength ?? 3, o.maxLength ?? 6, o.batch ?? 32, o.lr ?? 3e-3, o.seed ?? 1));
  const t0 = Date.now();
  const maxMs = (o.maxSeconds ?? 60) * 1000, target = o.targetAccuracy ?? 0.95, every = o.evalEvery ?? 50;
  try {
    let last: TrainerProgress = { step: 0, loss: NaN, exactMatch: 0, elapsedMs: 0, tokensPerSecond: 0, example: null };
    for (;;) {
      const s = parse<{ step: number; loss: number; tokensPerSecond: number }>(m.trainerStep(id, every));
      const e = parse<{ exactMatch: number; example: TrainerExample | null }>(m.trainerEvaluate(id, o.evalSize ?? 200, 12345));
      last = { step: s.step, loss: s.loss, exactMatch: e.exactMatch, elapsedMs: Date.now() - t0, tokensPerSecond: s.tokensPerSecond, example: e.example };
      emit(last);
      // Yield so a cancel message (or the page) gets a turn.
      await new Promise((r) => setTimeout(r, 0));
      if (last.exactMatch >= target) return { ...last, reason: 'target' };
      if (cancelled()) return { ...last, reason: 'cancelled' };
      if (last.elapsedMs >= maxMs) return { ...last, reason: 'time' };
    }
  } finally {
    m.trainerDispose(id);
  }
}
