// The guided path: every page of the site, in reading order. A page whose library API has not
// landed yet stays out of the navigation (`ready: false`) rather than showing something fake.

export interface PageInfo {
  file: string;
  title: string;
  short: string;
  blurb: string;
  ready: boolean;
}

export const PAGES: readonly PageInfo[] = [
  { file: 'pooling.html', title: 'Attention pooling', short: 'Pooling', ready: true,
    blurb: 'Nadaraya-Watson regression: a prediction is a weighted average of training values, and the weights are attention. Drag points, change the kernel and bandwidth, then train the bandwidth.' },
  { file: 'scoring.html', title: 'Scoring functions', short: 'Scoring', ready: true,
    blurb: 'Dot, scaled dot, general and additive scores on the same queries and keys; watch softmax saturate without 1/\u2060√d, and see valid-length, padding and causal masks.' },
  { file: 'heads.html', title: 'Self-, cross- and multi-head attention', short: 'Heads', ready: true,
    blurb: 'A sentence through encoder self-attention, causal decoder self-attention and cross-attention, per layer and head, in the head view and the model view.' },
  { file: 'translation.html', title: 'Translation', short: 'Translate', ready: true,
    blurb: 'Translate French and English with a GRU+Bahdanau or a Transformer model, greedy or beam search, decoding played step by step.' },
  { file: 'models.html', title: 'Real models', short: 'Real models', ready: true,
    blurb: 'Open a GPT-2, BERT or GPT-Neo checkpoint from your disk or a URL and see every layer and head on your text, find previous-token and induction heads, and watch each generated token\'s attention.' },
  { file: 'positional.html', title: 'Positional encodings', short: 'Positions', ready: true,
    blurb: 'The sinusoidal matrix, dot products between positions, and how RoPE and ALiBi bring relative position into the scores.' },
  { file: 'efficient.html', title: 'Efficient attention', short: 'Efficient', ready: true,
    blurb: 'Local and sparse attention patterns as masks, LSH buckets, and their cost beside dense and linear attention, measured in your browser as the sequence grows.' },
  { file: 'performance.html', title: 'Performance', short: 'Performance', ready: true,
    blurb: 'Runs the attention benchmark in your browser: scalar vs SIMD vs threads, as a chart with the numbers.' },
  { file: 'embed.html', title: 'Embed in a course', short: 'Embed', ready: true,
    blurb: 'Put any widget or page in a lesson: a custom-element snippet, or an iframe with a preset view that sizes itself.' },
];
