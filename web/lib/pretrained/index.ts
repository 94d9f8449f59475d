// Issue 16: pretrained Hugging Face checkpoints (GPT-2, BERT, GPT-Neo) and their tokenizers.
export { loadModel, PretrainedModel } from './model.js';
export type {
  CheckpointFiles, CheckpointInput, FileSource, ForwardOptions, ForwardResult, GenerateOptions, GeneratedToken,
  LoadModelOptions, MaskPrediction, ModelInfo, ModelLoadProgress, Tokenizer,
} from './model.js';
export { ByteLevelBpe } from './bpe.js';
export { WordPiece } from './wordpiece.js';
export { summarizeHeads } from './summary.js';
export type { HeadSummary } from './summary.js';
