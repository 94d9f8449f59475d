// The committed tiny random-weight checkpoints of tests/pretrained/fixtures (made by
// make_fixtures.py, checked against the PyTorch reference), offered by the Real models page so a
// learner can try it offline. Real files in the build (no-inline: the site's CSP fetches from
// 'self' only, never data: URLs), loaded only when the page imports this module.
import gpt2Config from '../../tests/pretrained/fixtures/gpt2-f32/config.json?url&no-inline';
import gpt2Weights from '../../tests/pretrained/fixtures/gpt2-f32/model.safetensors?url&no-inline';
import gpt2Vocab from '../../tests/pretrained/fixtures/gpt2-f32/vocab.json?url&no-inline';
import gpt2Merges from '../../tests/pretrained/fixtures/gpt2-f32/merges.txt?url&no-inline';
import neoConfig from '../../tests/pretrained/fixtures/gpt-neo-f32/config.json?url&no-inline';
import neoWeights from '../../tests/pretrained/fixtures/gpt-neo-f32/model.safetensors?url&no-inline';
import neoTokenizer from '../../tests/pretrained/fixtures/gpt-neo-f32/tokenizer.json?url&no-inline';
import bertConfig from '../../tests/pretrained/fixtures/bert-mlm-bf16/config.json?url&no-inline';
import bertWeights from '../../tests/pretrained/fixtures/bert-mlm-bf16/model.safetensors?url&no-inline';
import bertVocab from '../../tests/pretrained/fixtures/bert-mlm-bf16/vocab.txt?url&no-inline';
import type { CheckpointFiles } from 'attnlab';

export interface TinyCheckpoint {
  id: string;
  /** A text its tiny vocabulary covers. */
  example: string;
  files: CheckpointFiles;
}

// new URL(…, location.href): the files' URLs relative to the page, as fetch() in a Worker would not resolve them.
const abs = (u: string) => new URL(u, location.href).href;

export const TINY_CHECKPOINTS: readonly TinyCheckpoint[] = [
  { id: 'gpt2', example: 'the cat sat on the mat',
    files: { config: abs(gpt2Config), weights: abs(gpt2Weights), vocab: abs(gpt2Vocab), merges: abs(gpt2Merges) } },
  { id: 'gpt-neo', example: 'the cat sat on the mat',
    files: { config: abs(neoConfig), weights: abs(neoWeights), tokenizer: abs(neoTokenizer) } },
  { id: 'bert', example: 'the cat sat on the [MASK] .',
    files: { config: abs(bertConfig), weights: abs(bertWeights), vocab: abs(bertVocab) } },
];
