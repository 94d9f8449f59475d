#!/usr/bin/env python3
"""The speed anchor: the PyTorch "NLP From Scratch: Translation with a Sequence to Sequence
Network and Attention" tutorial recipe (GRU encoder + Bahdanau attention GRU decoder, hidden 128,
batch 32, Adam 1e-3, MAX_LENGTH 10, the eng_prefixes filter, French -> English), 1 thread,
timed per epoch on the same pairs.tsv attnlab trains on. Model and loop follow the tutorial's
code (teacher forcing, MAX_LENGTH decoder steps, NLLLoss over the padded targets).

  /usr/bin/python3 tests/bench/pytorch_seq2seq_tutorial.py --epochs 1
"""
import argparse, random, re, time, unicodedata

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, RandomSampler, TensorDataset

SOS_token, EOS_token, MAX_LENGTH = 0, 1, 10
eng_prefixes = ("i am ", "i m ", "he is", "he s ", "she is", "she s ", "you are", "you re ",
                "we are", "we re ", "they are", "they re ")


class Lang:
    def __init__(self, name):
        self.name, self.word2index, self.index2word, self.n_words = name, {}, {0: "SOS", 1: "EOS"}, 2

    def addSentence(self, s):
        for w in s.split(' '):
            if w not in self.word2index:
                self.word2index[w] = self.n_words
                self.index2word[self.n_words] = w
                self.n_words += 1


def unicodeToAscii(s):
    return ''.join(c for c in unicodedata.normalize('NFD', s) if unicodedata.category(c) != 'Mn')


def normalizeString(s):
    s = unicodeToAscii(s.lower().strip())
    s = re.sub(r"([.!?])", r" \1", s)
    s = re.sub(r"[^a-zA-Z!?]+", r" ", s)
    return s.strip()


def filterPair(p):
    return len(p[0].split(' ')) < MAX_LENGTH and len(p[1].split(' ')) < MAX_LENGTH and p[1].startswith(eng_prefixes)


class EncoderRNN(nn.Module):
    def __init__(self, input_size, hidden_size, dropout_p=0.1):
        super().__init__()
        self.embedding = nn.Embedding(input_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, input):
        embedded = self.dropout(self.embedding(input))
        return self.gru(embedded)


class BahdanauAttention(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.Wa = nn.Linear(hidden_size, hidden_size)
        self.Ua = nn.Linear(hidden_size, hidden_size)
        self.Va = nn.Linear(hidden_size, 1)

    def forward(self, query, keys):
        scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))
        scores = scores.squeeze(2).unsqueeze(1)
        weights = F.softmax(scores, dim=-1)
        return torch.bmm(weights, keys), weights


class AttnDecoderRNN(nn.Module):
    def __init__(self, hidden_size, output_size, dropout_p=0.1):
        super().__init__()
        self.embedding = nn.Embedding(output_size, hidden_size)
        self.attention = BahdanauAttention(hidden_size)
        self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, output_size)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, encoder_outputs, encoder_hidden, target_tensor=None):
        batch_size = encoder_outputs.size(0)
        decoder_input = torch.empty(batch_size, 1, dtype=torch.long).fill_(SOS_token)
        decoder_hidden, outs = encoder_hidden, []
        for i in range(MAX_LENGTH):
            out, decoder_hidden, _ = self.forward_step(decoder_input, decoder_hidden, encoder_outputs)
            outs.append(out)
            if target_tensor is not None:
                decoder_input = target_tensor[:, i].unsqueeze(1)
            else:
                decoder_input = out.topk(1)[1].squeeze(-1).detach()
        return F.log_softmax(torch.cat(outs, dim=1), dim=-1), decoder_hidden

    def forward_step(self, input, hidden, encoder_outputs):
        embedded = self.dropout(self.embedding(input))
        context, w = self.attention(hidden.permute(1, 0, 2), encoder_outputs)
        output, hidden = self.gru(torch.cat((embedded, context), dim=2), hidden)
        return self.out(output), hidden, w


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--data', default='/work/shared/data/tatoeba-fra-eng/pairs.tsv')
    ap.add_argument('--epochs', type=int, default=1)
    ap.add_argument('--seed', type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(a.seed)
    random.seed(a.seed)
    lines = open(a.data, encoding='utf-8').read().strip().split('\n')
    pairs = [[normalizeString(s) for s in l.split('\t')[:2]][::-1] for l in lines]  # [fra, eng]
    pairs = [p for p in pairs if filterPair(p)]
    inp, out = Lang('fra'), Lang('eng')
    for p in pairs:
        inp.addSentence(p[0])
        out.addSentence(p[1])
    n = len(pairs)
    ids_in = torch.zeros((n, MAX_LENGTH), dtype=torch.long)
    ids_out = torch.zeros((n, MAX_LENGTH), dtype=torch.long)
    for i, (f, e) in enumerate(pairs):
        x = [inp.word2index[w] for w in f.split(' ')] + [EOS_token]
        y = [out.word2index[w] for w in e.split(' ')] + [EOS_token]
        ids_in[i, :len(x)] = torch.tensor(x)
        ids_out[i, :len(y)] = torch.tensor(y)
    data = TensorDataset(ids_in, ids_out)
    loader = DataLoader(data, sampler=RandomSampler(data), batch_size=32)
    print(f"{n} filtered pairs, vocab fra {inp.n_words} eng {out.n_words}, torch {torch.__version__}, "
          f"threads {torch.get_num_threads()}", flush=True)
    enc, dec = EncoderRNN(inp.n_words, 128), AttnDecoderRNN(128, out.n_words)
    eo, do = torch.optim.Adam(enc.parameters(), lr=1e-3), torch.optim.Adam(dec.parameters(), lr=1e-3)
    crit = nn.NLLLoss()
    for ep in range(1, a.epochs + 1):
        t0, c0, total = time.time(), time.process_time(), 0.0
        for x, y in loader:
            eo.zero_grad()
            do.zero_grad()
            eout, eh = enc(x)
            dout, _ = dec(eout, eh, y)
            loss = crit(dout.view(-1, dout.size(-1)), y.view(-1))
            loss.backward()
            eo.step()
            do.step()
            total += loss.item()
        dt, cpu = time.time() - t0, time.process_time() - c0
        print(f"epoch {ep}: {dt:.1f} s ({cpu:.1f} s CPU), loss {total / len(loader):.4f}, {n / dt:.1f} pairs/s", flush=True)


if __name__ == '__main__':
    main()
