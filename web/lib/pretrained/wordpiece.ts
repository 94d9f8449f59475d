// BERT's tokenizer as google-research/bert's tokenization.py defines it (Hugging Face's
// BertTokenizer repeats it): BasicTokenizer (drop control characters, space around CJK ideographs,
// split on whitespace, lower-case and strip accents (NFD, drop Mn) for uncased models, split off
// punctuation) then WordpieceTokenizer (greedy longest match, "##" continuations, [UNK] for words
// of more than 100 characters or with no match). Special tokens ([CLS], [SEP], [MASK], ...) typed
// in the text stay whole, as the Hugging Face tokenizers keep added tokens.
import { argError } from '../errors.js';

const SPECIALS = ['[CLS]', '[SEP]', '[MASK]', '[PAD]', '[UNK]'];
const SPECIAL_RE = new RegExp(SPECIALS.map((t) => t.replace(/[[\]]/g, '\\$&')).join('|'), 'g');

// tokenization.py's _is_chinese_char: the CJK Unified Ideographs blocks (not Hangul or kana).
function isCjk(cp: number): boolean {
  return (cp >= 0x4e00 && cp <= 0x9fff) || (cp >= 0x3400 && cp <= 0x4dbf) || (cp >= 0x20000 && cp <= 0x2a6df) ||
    (cp >= 0x2a700 && cp <= 0x2b73f) || (cp >= 0x2b740 && cp <= 0x2b81f) || (cp >= 0x2b820 && cp <= 0x2ceaf) ||
    (cp >= 0xf900 && cp <= 0xfaff) || (cp >= 0x2f800 && cp <= 0x2fa1f);
}
// _is_punctuation: ASCII non-alphanumerics count as punctuation, plus Unicode category P*.
function isPunct(ch: string, cp: number): boolean {
  if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126)) return true;
  return /\p{P}/u.test(ch);
}
// _is_whitespace: space, \t \n \r, and category Zs.
function isSpace(ch: string): boolean {
  return ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r' || /\p{Zs}/u.test(ch);
}
// _is_control: category C* except \t \n \r (which count as whitespace).
function isControl(ch: string): boolean {
  if (ch === '\t' || ch === '\n' || ch === '\r') return false;
  return /\p{C}/u.test(ch);
}

export class WordPiece {
  readonly kind = 'wordpiece' as const;
  private readonly vocab: Map<string, number>;
  private readonly tokens: string[];

  constructor(tokens: readonly string[], private readonly lowerCase = true) {
    this.tokens = [...tokens];
    this.vocab = new Map(this.tokens.map((t, i) => [t, i]));
    for (const s of ['[CLS]', '[SEP]', '[UNK]'])
      if (!this.vocab.has(s)) throw argError('WordPiece', 'vocab', `a vocabulary with ${s}`, `${tokens.length} tokens without it`);
  }

  /**
   * vocab.txt: one token per line, the line number is its id. `lowerCase` defaults to what the
   * vocabulary shows (tokenizer_config.json's do_lower_case is not always shipped).
   */
  static fromVocabTxt(text: string, lowerCase?: boolean): WordPiece {
    const lines = text.split('\n').map((l) => l.replace(/\r$/, ''));
    if (lines.length && lines[lines.length - 1] === '') lines.pop();
    return new WordPiece(lines, lowerCase ?? WordPiece.looksUncased(lines));
  }

  /** Uncased vocabularies (bert-base-uncased, bert-tiny) hold no capitalised word outside [SPECIALS]. */
  static looksUncased(tokens: readonly string[]): boolean {
    return !tokens.some((t) => t !== undefined && !t.startsWith('[') && /^(##)?\p{Lu}/u.test(t));
  }

  get vocabSize(): number {
    return this.tokens.length;
  }
  id(token: string): number | undefined {
    return this.vocab.get(token);
  }

  /** BasicTokenizer: the words and punctuation of `text`. */
  basic(text: string): string[] {
    let clean = '';
    for (const ch of text) {
      const cp = ch.codePointAt(0)!;
      if (cp === 0 || cp === 0xfffd || isControl(ch)) continue;
      if (isCjk(cp)) clean += ' ' + ch + ' ';
      else clean += isSpace(ch) ? ' ' : ch;
    }
    // Special tokens split the text wherever they stand, as in Hugging Face's tokenizers: "[MASK]."
    // is [MASK] then ".", not the word "[mask]." in pieces.
    clean = clean.replace(SPECIAL_RE, (t) => (this.vocab.has(t) ? ` ${t} ` : t));
    const out: string[] = [];
    for (let word of clean.split(' ')) {
      if (!word) continue;
      if (SPECIALS.includes(word) && this.vocab.has(word)) {
        out.push(word);
        continue;
      }
      if (this.lowerCase) word = word.toLowerCase().normalize('NFD').replace(/\p{Mn}/gu, '');
      let cur = '';
      for (const ch of word) {
        if (isPunct(ch, ch.codePointAt(0)!)) {
          if (cur) out.push(cur);
          out.push(ch);
          cur = '';
        } else cur += ch;
      }
      if (cur) out.push(cur);
    }
    return out;
  }

  /** WordpieceTokenizer on one word. */
  private pieces(word: string, out: number[]): void {
    const unk = this.vocab.get('[UNK]')!;
    const chars = Array.from(word);
    if (chars.length > 100) return void out.push(unk);
    const ids: number[] = [];
    for (let start = 0; start < chars.length; ) {
      let end = chars.length, id: number | undefined;
      for (; end > start; end--) {
        const sub = (start > 0 ? '##' : '') + chars.slice(start, end).join('');
        id = this.vocab.get(sub);
        if (id !== undefined) break;
      }
      if (id === undefined) return void out.push(unk);
      ids.push(id);
      start = end;
    }
    out.push(...ids);
  }

  /** Ids without [CLS] / [SEP]. */
  encode(text: string): number[] {
    if (typeof text !== 'string') throw argError('tokenize', 'text', 'a string', text);
    const out: number[] = [];
    for (const w of this.basic(text)) this.pieces(w, out);
    return out;
  }

  /** [CLS] text [SEP] (and pair [SEP]), with BERT's token types (0 for the first segment, 1 after). */
  encodeForModel(text: string, pair?: string): { ids: number[]; types: number[] } {
    const cls = this.vocab.get('[CLS]')!, sep = this.vocab.get('[SEP]')!;
    const a = [cls, ...this.encode(text), sep];
    const b = pair === undefined ? [] : [...this.encode(pair), sep];
    return { ids: [...a, ...b], types: [...a.map(() => 0), ...b.map(() => 1)] };
  }

  token(id: number): string {
    const t = this.tokens[id];
    if (t === undefined) throw argError('token', 'id', `an id in [0, ${this.tokens.length})`, id);
    return t;
  }

  decode(ids: readonly number[]): string {
    return ids.map((i) => this.token(i)).join(' ').replace(/ ##/g, '');
  }
}
