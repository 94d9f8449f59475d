"""Golden test vectors for attnlab, made with PyTorch.

Regenerate (Debian's python3, which has torch and numpy; the output is
deterministic, so re-running it must not change the committed files):

    /usr/bin/python3 tests/golden/make_golden.py

Every input (activations, weights, biases, float masks) is drawn in float32 and
then widened to float64, so each input is exactly representable in float32 and
is written with 9 significant digits (enough to round-trip a float32). The
expected results are computed in float64 and written with 12 significant
digits. attnlab computes in float32; tests/js/golden.test.ts compares it with
these values.

Files (JSON, one object each: {"generator", "torch", "cases": [...]}):

  mha.json            torch.nn.MultiheadAttention(E, H, batch_first=True) in
                      eval mode under torch.no_grad(): self-attention,
                      cross-attention (L != S), bias=False, key_padding_mask
                      (bool [B,S], true = ignore), attn_mask bool [L,S]
                      (true = NOT allowed), float [L,S] (added to the scores),
                      bool [B*H,L,S], causal (attn_mask = triu(ones(L,L),1),
                      also flagged "causal": true), need_weights with
                      average_attn_weights true and false, and unbatched
                      inputs (query [L,E]).
                      Case fields: name, E, H, query/key/value, params
                      {inProjWeight [3E,E], inProjBias [3E] | null,
                      outProjWeight [E,E], outProjBias [E] | null},
                      keyPaddingMask, attnMask, causal, needWeights,
                      averageWeights, expected {output, weights | null}.

  sdpa.json           scaled dot-product attention with the semantics of
                      torch.nn.functional.scaled_dot_product_attention
                      (torch >= 2.0; torch 1.13 lacks it, so it is computed
                      here in float64): softmax(q k^T / sqrt(D) + mask) v,
                      bool attn_mask true = MAY attend, float attn_mask added,
                      masks numpy-broadcast to [B,H,Sq,Sk], is_causal =
                      lower-triangular aligned top-left (query i sees keys
                      j <= i, also when Sq < Sk). A few cases use d2l-style
                      valid_lens instead of a mask, on 3-D inputs
                      q [B,Sq,D], k [B,Sk,D], v [B,Sk,Dv] as in d2l's
                      DotProductAttention (valid_lens [B] or [B,Sq]).
                      Case fields: name, q [B,H,Sq,D], k [B,H,Sk,D],
                      v [B,H,Sk,Dv], attnMask, causal, validLens,
                      expected {output [B,H,Sq,Dv], weights [B,H,Sq,Sk]}.

  masked_softmax.json d2l-style masked softmax over the last axis of
                      X [B,Sq,Sk]: valid_lens [B] (one per batch) or [B,Sq]
                      (one per row), every value >= 1; entries at key index
                      >= valid_len are exactly 0 in the expected result. One
                      case uses causal (Sq == Sk) instead.
                      Case fields: name, x, validLens, causal,
                      expected {output}.

Tensor encoding: {"shape": [...], "data": [...]} row-major. Bool masks:
{"dtype": "bool", "shape", "data": [0|1, ...]}; float masks:
{"dtype": "float", "shape", "data"}. validLens: {"shape", "data": [ints]}.
Absent things are null.
"""

import json
import math
import os

import torch
import torch.nn.functional as F

OUT_DIR = os.path.dirname(os.path.abspath(__file__))
GENERATOR = "tests/golden/make_golden.py"

torch.manual_seed(20240601)


# ----------------------------------------------------------------- encoding

def _fmt(x, digits):
    if not math.isfinite(x):
        raise ValueError("non-finite value in fixture: %r" % x)
    v = float("%.*g" % (digits, x))
    if v == 0.0:
        return 0  # also folds -0.0
    if v == int(v) and abs(v) < 1e15:
        return int(v)
    return v


def enc_in(t):
    """Float32-representable input tensor (9 significant digits)."""
    t = t.detach()
    assert torch.equal(t.float().double(), t.double()), "input not float32-representable"
    return {"shape": list(t.shape), "data": [_fmt(x, 9) for x in t.double().flatten().tolist()]}


def enc_out(t):
    """Float64 expected tensor (12 significant digits)."""
    t = t.detach().double()
    return {"shape": list(t.shape), "data": [_fmt(x, 12) for x in t.flatten().tolist()]}


def enc_bool(m):
    return {"dtype": "bool", "shape": list(m.shape), "data": [1 if b else 0 for b in m.flatten().tolist()]}


def enc_mask(m):
    if m is None:
        return None
    if m.dtype == torch.bool:
        return enc_bool(m)
    d = enc_in(m)
    d = {"dtype": "float", **d}
    return d


def enc_lens(v):
    if v is None:
        return None
    return {"shape": list(v.shape), "data": [int(x) for x in v.flatten().tolist()]}


def rand32(*shape, scale=1.0):
    return (torch.randn(*shape, dtype=torch.float32) * scale).double()


def write(name, cases):
    path = os.path.join(OUT_DIR, name)
    doc = {"generator": GENERATOR, "torch": torch.__version__, "cases": cases}
    text = json.dumps(doc, separators=(",", ":"))
    # One case per line keeps diffs readable.
    text = text.replace(',{"name":', ',\n{"name":').replace('[{"name":', '[\n{"name":')
    with open(path, "w") as f:
        f.write(text + "\n")
    print("%-22s %3d cases %8d bytes" % (name, len(cases), len(text) + 1))
    return len(text) + 1


def random_bool_mask(shape, p, keep_axis_nonempty=True):
    """True with probability p; no row (last axis) entirely True."""
    m = torch.rand(*shape) < p
    flat = m.reshape(-1, shape[-1])
    for r in range(flat.shape[0]):
        if bool(flat[r].all()):
            flat[r, torch.randint(shape[-1], (1,)).item()] = False
    return flat.reshape(*shape)


# -------------------------------------------------------------------- MHA

def ref_mha(q, k, v, w_in, b_in, w_out, b_out, H, kpm, attn_mask, avg):
    """Independent float64 reference for nn.MultiheadAttention (batched)."""
    B, L, E = q.shape
    S = k.shape[1]
    D = E // H
    wq, wk, wv = w_in.chunk(3)
    bq, bk, bv = (b_in.chunk(3) if b_in is not None else (None, None, None))
    Q = F.linear(q, wq, bq).view(B, L, H, D).transpose(1, 2)
    K = F.linear(k, wk, bk).view(B, S, H, D).transpose(1, 2)
    V = F.linear(v, wv, bv).view(B, S, H, D).transpose(1, 2)
    scores = Q @ K.transpose(-1, -2) / math.sqrt(D)  # [B,H,L,S]
    if attn_mask is not None:
        am = attn_mask if attn_mask.dim() == 2 else attn_mask.view(B, H, L, S)
        if am.dtype == torch.bool:
            scores = scores.masked_fill(am, float("-inf"))
        else:
            scores = scores + am
    if kpm is not None:
        scores = scores.masked_fill(kpm.view(B, 1, 1, S), float("-inf"))
    w = torch.softmax(scores, dim=-1)
    o = (w @ V).transpose(1, 2).reshape(B, L, E)
    o = F.linear(o, w_out, b_out)
    return o, (w.mean(dim=1) if avg else w)


def mha_case(name, E, H, B, L, S, *, bias=True, self_attn=False, kpm=False, attn_mask=None,
             causal=False, need_weights=True, average=True, unbatched=False):
    # Parameters: default init (xavier_uniform_ for in_proj, zero biases) in
    # float32; biases are then randomized so that they matter.
    m = torch.nn.MultiheadAttention(E, H, bias=bias, batch_first=True, dtype=torch.float32)
    if bias:
        with torch.no_grad():
            m.in_proj_bias.copy_(torch.rand(3 * E, dtype=torch.float32) - 0.5)
            m.out_proj.bias.copy_(torch.rand(E, dtype=torch.float32) - 0.5)
    m = m.double().eval()

    if self_attn:
        S = L
    bq = 1 if unbatched else B
    q = rand32(bq, L, E)
    if self_attn:
        # torch 1.13's fast path (taken when query is key is value) crashes
        # with bias=False; an equal copy takes the ordinary path instead.
        k = v = q if bias else q.clone()
    else:
        k = rand32(bq, S, E)
        v = rand32(bq, S, E)

    kpm_t = random_bool_mask((bq, S), 0.35) if kpm else None

    am = None
    if causal:
        assert L == S
        am = torch.triu(torch.ones(L, L, dtype=torch.bool), 1)
    elif attn_mask == "bool2d":
        am = random_bool_mask((L, S), 0.3)
    elif attn_mask == "float2d":
        am = rand32(L, S)
        am[torch.rand(L, S) < 0.15] = -1e9  # a "soft -inf" (float32-exact)
        am[:, 0] = torch.randn(L, dtype=torch.float32).double()  # keep each row finite somewhere
    elif attn_mask == "bool3d":
        am = random_bool_mask((bq * H, L, S), 0.3)
    if kpm_t is not None and am is not None and am.dtype == torch.bool:
        # never a fully masked row after combining both masks
        full = am.view(-1, L, S) if am.dim() == 3 else am.view(1, L, S)
        for b in range(bq):
            for h in range(full.shape[0] // bq if am.dim() == 3 else 1):
                mm = full[b * H + h if am.dim() == 3 else 0]
                for i in range(L):
                    if bool((mm[i] | kpm_t[b]).all()):
                        j = int((~kpm_t[b]).nonzero()[0])
                        mm[i, j] = False

    with torch.no_grad():
        args = dict(need_weights=need_weights, average_attn_weights=average)
        if kpm_t is not None:
            args["key_padding_mask"] = kpm_t[0] if unbatched else kpm_t
        if am is not None:
            args["attn_mask"] = am
        if unbatched:
            out, w = m(q[0], k[0], v[0], **args)
        else:
            out, w = m(q, k, v, **args)

        # cross-check with an independent float64 reference
        r_out, r_w = ref_mha(q, k, v, m.in_proj_weight, m.in_proj_bias, m.out_proj.weight,
                             m.out_proj.bias, H, kpm_t, am, average)
        if unbatched:
            r_out, r_w = r_out[0], r_w[0]
        assert (out - r_out).abs().max().item() < 1e-12, name
        if need_weights:
            assert (w - r_w).abs().max().item() < 1e-12, name
        else:
            assert w is None

    return {
        "name": name,
        "E": E,
        "H": H,
        "query": enc_in(q[0] if unbatched else q),
        "key": enc_in(k[0] if unbatched else k),
        "value": enc_in(v[0] if unbatched else v),
        "params": {
            "inProjWeight": enc_in(m.in_proj_weight),
            "inProjBias": enc_in(m.in_proj_bias) if bias else None,
            "outProjWeight": enc_in(m.out_proj.weight),
            "outProjBias": enc_in(m.out_proj.bias) if bias else None,
        },
        "keyPaddingMask": (enc_bool(kpm_t[0] if unbatched else kpm_t) if kpm_t is not None else None),
        "attnMask": enc_mask(am),
        "causal": causal,
        "needWeights": need_weights,
        "averageWeights": average,
        "expected": {"output": enc_out(out), "weights": enc_out(w) if need_weights else None},
    }


def make_mha():
    c = []
    c.append(mha_case("self_E8_H2_B2_L5", 8, 2, 2, 5, 5, self_attn=True, need_weights=False))
    c.append(mha_case("self_E12_H1_B1_L4_weights", 12, 1, 1, 4, 4, self_attn=True))
    c.append(mha_case("cross_E8_H2_B2_L3_S6", 8, 2, 2, 3, 6))
    c.append(mha_case("cross_E16_H4_B3_L6_S2_noweights", 16, 4, 3, 6, 2, need_weights=False))
    c.append(mha_case("cross_E12_H4_B1_L1_S7", 12, 4, 1, 1, 7))
    c.append(mha_case("nobias_E8_H2_B2_L4_S5", 8, 2, 2, 4, 5, bias=False))
    c.append(mha_case("nobias_self_E12_H2_B1_L6", 12, 2, 1, 6, 6, bias=False, self_attn=True,
                      average=False))
    c.append(mha_case("kpm_E8_H2_B3_L4_S6", 8, 2, 3, 4, 6, kpm=True))
    c.append(mha_case("kpm_self_E16_H4_B2_L5", 16, 4, 2, 5, 5, kpm=True, self_attn=True,
                      need_weights=False))
    c.append(mha_case("mask_bool2d_E8_H2_B2_L5_S4", 8, 2, 2, 5, 4, attn_mask="bool2d"))
    c.append(mha_case("mask_float2d_E12_H2_B2_L3_S5", 12, 2, 2, 3, 5, attn_mask="float2d"))
    c.append(mha_case("mask_bool3d_E8_H2_B2_L4_S3_perhead", 8, 2, 2, 4, 3, attn_mask="bool3d",
                      average=False))
    c.append(mha_case("mask_bool2d_kpm_E8_H4_B2_L4_S5", 8, 4, 2, 4, 5, attn_mask="bool2d", kpm=True))
    c.append(mha_case("causal_self_E8_H2_B2_L6", 8, 2, 2, 6, 6, self_attn=True, causal=True))
    c.append(mha_case("causal_cross_E12_H4_B1_L5_perhead", 12, 4, 1, 5, 5, causal=True,
                      average=False))
    c.append(mha_case("weights_perhead_E16_H4_B2_L3_S4", 16, 4, 2, 3, 4, average=False))
    c.append(mha_case("weights_avg_E16_H2_B1_L7_S7", 16, 2, 1, 7, 7))
    c.append(mha_case("unbatched_E8_H2_L4_S6", 8, 2, 1, 4, 6, unbatched=True))
    c.append(mha_case("unbatched_self_E12_H4_L5_perhead_kpm", 12, 4, 1, 5, 5, unbatched=True,
                      self_attn=True, average=False, kpm=True))
    return c


# ------------------------------------------------------------------- SDPA

def sdpa_ref(q, k, v, attn_mask=None, is_causal=False, valid_lens=None):
    """float64 softmax(q k^T / sqrt(D) + mask) v with torch>=2.0 SDPA semantics."""
    D = q.shape[-1]
    scores = q @ k.transpose(-1, -2) / math.sqrt(D)
    Sq, Sk = scores.shape[-2], scores.shape[-1]
    if is_causal:
        allowed = torch.ones(Sq, Sk, dtype=torch.bool).tril(diagonal=0)
        scores = scores.masked_fill(~allowed, float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            scores = scores.masked_fill(~attn_mask, float("-inf"))
        else:
            scores = scores + attn_mask
    if valid_lens is not None:
        # d2l: valid_lens over the flattened leading dims; [N] per matrix or [N,Sq] per row
        lead = scores.shape[:-2]
        s = scores.reshape(-1, Sq, Sk)
        vl = valid_lens if valid_lens.dim() == 1 else valid_lens.reshape(-1, Sq)
        if vl.dim() == 1:
            vl = vl[:, None].expand(-1, Sq)
        keep = torch.arange(Sk)[None, None, :] < vl[:, :, None]
        scores = s.masked_fill(~keep, float("-inf")).reshape(*lead, Sq, Sk)
    w = torch.softmax(scores, dim=-1)
    return w @ v, w


def sdpa_case(name, B, H, Sq, Sk, D, Dv=None, *, mask=None, causal=False, valid=None):
    Dv = Dv or D
    lead = (B,) if H is None else (B, H)  # H=None: d2l-style 3-D [B,Sq,D]
    q = rand32(*lead, Sq, D)
    k = rand32(*lead, Sk, D)
    v = rand32(*lead, Sk, Dv)
    am = None
    if mask is not None:
        kind, shape = mask
        if kind == "bool":
            # True = may attend; make sure the broadcast rows are never all False
            am = ~random_bool_mask(shape, 0.35)
        else:
            am = rand32(*shape)
            am[torch.rand(*shape) < 0.15] = -1e9
            am[..., 0] = 0.0
    vl = None
    if valid is not None:
        n = B
        vl = torch.randint(1, Sk + 1, (n,) if valid == "1d" else (n, Sq), dtype=torch.int32)
    out, w = sdpa_ref(q, k, v, am, causal, vl)
    assert torch.isfinite(out).all() and torch.isfinite(w).all(), name
    return {
        "name": name,
        "q": enc_in(q),
        "k": enc_in(k),
        "v": enc_in(v),
        "attnMask": enc_mask(am),
        "causal": causal,
        "validLens": enc_lens(vl),
        "expected": {"output": enc_out(out), "weights": enc_out(w)},
    }


def make_sdpa():
    c = []
    c.append(sdpa_case("plain_B2_H2_Sq3_Sk5_D4", 2, 2, 3, 5, 4))
    c.append(sdpa_case("plain_Dv_B1_H3_Sq4_Sk6_D8_Dv5", 1, 3, 4, 6, 8, 5))
    c.append(sdpa_case("bool_mask_SqSk_B2_H2_Sq4_Sk5_D4", 2, 2, 4, 5, 4, mask=("bool", (4, 5))))
    c.append(sdpa_case("bool_mask_B11SqSk_B2_H3_Sq3_Sk4_D6", 2, 3, 3, 4, 6, mask=("bool", (2, 1, 3, 4))))
    c.append(sdpa_case("bool_mask_B11Sk_B3_H2_Sq5_Sk6_D4_Dv3", 3, 2, 5, 6, 4, 3,
                       mask=("bool", (3, 1, 1, 6))))
    c.append(sdpa_case("float_mask_BHSqSk_B2_H2_Sq3_Sk5_D8", 2, 2, 3, 5, 8, mask=("float", (2, 2, 3, 5))))
    c.append(sdpa_case("causal_square_B2_H2_Sq5_Sk5_D4", 2, 2, 5, 5, 4, causal=True))
    c.append(sdpa_case("causal_SqltSk_B1_H2_Sq3_Sk6_D4", 1, 2, 3, 6, 4, causal=True))
    c.append(sdpa_case("single_query_B2_H1_Sq1_Sk7_D8", 2, 1, 1, 7, 8))
    c.append(sdpa_case("validlens_1d_3D_B3_Sq4_Sk6_D4", 3, None, 4, 6, 4, valid="1d"))
    c.append(sdpa_case("validlens_2d_3D_B2_Sq3_Sk5_D4_Dv6", 2, None, 3, 5, 4, 6, valid="2d"))
    return c


# --------------------------------------------------------- masked softmax

def masked_softmax_case(name, B, Sq, Sk, valid=None, causal=False, lens=None):
    x = rand32(B, Sq, Sk, scale=2.0)
    keep = torch.ones(B, Sq, Sk, dtype=torch.bool)
    vl = None
    if valid == "1d":
        vl = (torch.tensor(lens, dtype=torch.int32) if lens is not None
              else torch.randint(1, Sk + 1, (B,), dtype=torch.int32))
        keep &= torch.arange(Sk)[None, None, :] < vl[:, None, None]
    elif valid == "2d":
        vl = (torch.tensor(lens, dtype=torch.int32) if lens is not None
              else torch.randint(1, Sk + 1, (B, Sq), dtype=torch.int32))
        keep &= torch.arange(Sk)[None, None, :] < vl[:, :, None]
    if causal:
        keep &= torch.ones(Sq, Sk, dtype=torch.bool).tril()
    y = torch.softmax(x.masked_fill(~keep, float("-inf")), dim=-1)
    assert bool((y[~keep] == 0).all())
    return {
        "name": name,
        "x": enc_in(x),
        "validLens": enc_lens(vl),
        "causal": causal,
        "expected": {"output": enc_out(y)},
    }


def make_masked_softmax():
    c = []
    c.append(masked_softmax_case("validlens_1d_B2_Sq2_Sk4", 2, 2, 4, valid="1d", lens=[2, 3]))  # d2l example
    c.append(masked_softmax_case("validlens_1d_B3_Sq4_Sk7", 3, 4, 7, valid="1d"))
    c.append(masked_softmax_case("validlens_2d_B2_Sq2_Sk4", 2, 2, 4, valid="2d", lens=[[1, 3], [2, 4]]))
    c.append(masked_softmax_case("validlens_2d_B3_Sq5_Sk6", 3, 5, 6, valid="2d"))
    c.append(masked_softmax_case("validlens_1d_B1_Sq1_Sk1", 1, 1, 1, valid="1d"))
    c.append(masked_softmax_case("nomask_B2_Sq3_Sk5", 2, 3, 5))
    c.append(masked_softmax_case("causal_B2_Sq4_Sk4", 2, 4, 4, causal=True))
    return c


def main():
    torch.set_default_dtype(torch.float64)  # any float tensor not made by rand32 is float64
    total = 0
    total += write("mha.json", make_mha())
    total += write("sdpa.json", make_sdpa())
    total += write("masked_softmax.json", make_masked_softmax())
    print("%-22s           %8d bytes" % ("total", total))


if __name__ == "__main__":
    main()
