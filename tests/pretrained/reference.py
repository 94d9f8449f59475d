"""PyTorch reference forwards of GPT-2, BERT and GPT-Neo, written from the published architectures
with Hugging Face transformers' tensor names and layouts (transformers is not installable on the
build machines, Debian's python3-torch is):

  GPT-2   transformers/models/gpt2/modeling_gpt2.py: GPT2Attention._attn (scores / sqrt(head_dim),
          causal mask, softmax), Conv1D (y = x @ W + b, W [in, out]), GPT2MLP (gelu_new), ln_f,
          lm_head tied to wte.
  BERT    transformers/models/bert/modeling_bert.py: BertEmbeddings, BertSelfAttention,
          BertSelfOutput, BertIntermediate (gelu = erf), BertOutput, BertLMPredictionHead.
  GPT-Neo transformers/models/gpt_neo/modeling_gpt_neo.py: GPTNeoSelfAttention (no bias on q/k/v,
          unscaled scores, local layers: bias ^ tril(bias, -window_size)), nn.Linear MLP.

Every function takes a dict name -> tensor (float64 for the reference) and returns
(logits or hidden states [S, *], attentions [L, H, S, S]).
"""
import math

import torch


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def gelu(x):
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


def act(name):
    return gelu if name == "gelu" else gelu_new


def layer_norm(x, w, b, eps):
    return torch.nn.functional.layer_norm(x, w.shape, w, b, eps)


def split_heads(x, H):
    S, E = x.shape
    return x.view(S, H, E // H).permute(1, 0, 2)  # [H, S, dh]


def attend(q, k, v, H, scale, allowed):
    q, k, v = split_heads(q, H), split_heads(k, H), split_heads(v, H)
    w = torch.matmul(q, k.transpose(-1, -2)) * scale
    if allowed is not None:
        w = torch.where(allowed, w, torch.tensor(torch.finfo(w.dtype).min, dtype=w.dtype))
    w = torch.softmax(w, dim=-1)
    o = torch.matmul(w, v).permute(1, 0, 2).reshape(q.shape[1], -1)
    return o, w


def gpt2(t, cfg, ids, prefix=""):
    p = prefix
    E, H, L = cfg["n_embd"], cfg["n_head"], cfg["n_layer"]
    eps = cfg.get("layer_norm_epsilon", 1e-5)
    # A list, or a traced tensor (tests/bench/pretrained_onnx.py exports this function to ONNX).
    ids = ids if torch.is_tensor(ids) else torch.tensor(ids)
    S = ids.shape[0]
    x = t[p + "wte.weight"][ids] + t[p + "wpe.weight"][:S]
    causal = torch.tril(torch.ones(S, S, dtype=torch.bool))
    atts = []
    for l in range(L):
        h = f"{p}h.{l}."
        a = layer_norm(x, t[h + "ln_1.weight"], t[h + "ln_1.bias"], eps)
        qkv = torch.addmm(t[h + "attn.c_attn.bias"], a, t[h + "attn.c_attn.weight"])  # Conv1D
        q, k, v = qkv.split(E, dim=1)
        o, w = attend(q, k, v, H, 1.0 / math.sqrt(E // H), causal)
        atts.append(w)
        x = x + torch.addmm(t[h + "attn.c_proj.bias"], o, t[h + "attn.c_proj.weight"])
        m = layer_norm(x, t[h + "ln_2.weight"], t[h + "ln_2.bias"], eps)
        m = gelu_new(torch.addmm(t[h + "mlp.c_fc.bias"], m, t[h + "mlp.c_fc.weight"]))
        x = x + torch.addmm(t[h + "mlp.c_proj.bias"], m, t[h + "mlp.c_proj.weight"])
    x = layer_norm(x, t[p + "ln_f.weight"], t[p + "ln_f.bias"], eps)
    return x @ t[p + "wte.weight"].T, torch.stack(atts)


def gpt_neo(t, cfg, ids, kinds):
    E, H, L = cfg["hidden_size"], cfg["num_heads"], cfg["num_layers"]
    eps = cfg.get("layer_norm_epsilon", 1e-5)
    ids = ids if torch.is_tensor(ids) else torch.tensor(ids)  # a list, or traced (tests/bench/pretrained_onnx.py)
    S = ids.shape[0]
    p = "transformer."
    x = t[p + "wte.weight"][ids] + t[p + "wpe.weight"][:S]
    # transformers' causal bias and local mask bias ^ tril(bias, -window), i.e. keys j with
    # i - window < j <= i, from the position difference (ops that ONNX export takes).
    pos = torch.arange(S)
    d = pos[:, None] - pos[None, :]
    bias = d >= 0
    local = bias & (d < cfg["window_size"])
    atts = []
    lin = torch.nn.functional.linear
    for l in range(L):
        h = f"{p}h.{l}."
        a = layer_norm(x, t[h + "ln_1.weight"], t[h + "ln_1.bias"], eps)
        q = lin(a, t[h + "attn.attention.q_proj.weight"])
        k = lin(a, t[h + "attn.attention.k_proj.weight"])
        v = lin(a, t[h + "attn.attention.v_proj.weight"])
        o, w = attend(q, k, v, H, 1.0, local if kinds[l] == "local" else bias)
        atts.append(w)
        x = x + lin(o, t[h + "attn.attention.out_proj.weight"], t[h + "attn.attention.out_proj.bias"])
        m = layer_norm(x, t[h + "ln_2.weight"], t[h + "ln_2.bias"], eps)
        m = gelu_new(lin(m, t[h + "mlp.c_fc.weight"], t[h + "mlp.c_fc.bias"]))
        x = x + lin(m, t[h + "mlp.c_proj.weight"], t[h + "mlp.c_proj.bias"])
    x = layer_norm(x, t[p + "ln_f.weight"], t[p + "ln_f.bias"], eps)
    return x @ t[p + "wte.weight"].T, torch.stack(atts)


def bert(t, cfg, ids, types, prefix, mlm, ln="weight"):
    E, H, L = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_hidden_layers"]
    eps = cfg.get("layer_norm_eps", 1e-12)
    g, b = ("weight", "bias") if ln == "weight" else ("gamma", "beta")
    f = act(cfg.get("hidden_act", "gelu"))
    lin = torch.nn.functional.linear
    p = prefix
    ids = ids if torch.is_tensor(ids) else torch.tensor(ids)  # a list, or traced (tests/bench/pretrained_onnx.py)
    types = types if torch.is_tensor(types) else torch.tensor(types)
    S = ids.shape[0]
    e = p + "embeddings."
    x = t[e + "word_embeddings.weight"][ids] + t[e + "position_embeddings.weight"][:S] + t[e + "token_type_embeddings.weight"][types]
    x = layer_norm(x, t[e + f"LayerNorm.{g}"], t[e + f"LayerNorm.{b}"], eps)
    atts = []
    for l in range(L):
        h = f"{p}encoder.layer.{l}."
        s = h + "attention.self."
        q = lin(x, t[s + "query.weight"], t[s + "query.bias"])
        k = lin(x, t[s + "key.weight"], t[s + "key.bias"])
        v = lin(x, t[s + "value.weight"], t[s + "value.bias"])
        o, w = attend(q, k, v, H, 1.0 / math.sqrt(E // H), None)
        atts.append(w)
        o = lin(o, t[h + "attention.output.dense.weight"], t[h + "attention.output.dense.bias"])
        x = layer_norm(o + x, t[h + f"attention.output.LayerNorm.{g}"], t[h + f"attention.output.LayerNorm.{b}"], eps)
        m = f(lin(x, t[h + "intermediate.dense.weight"], t[h + "intermediate.dense.bias"]))
        m = lin(m, t[h + "output.dense.weight"], t[h + "output.dense.bias"])
        x = layer_norm(m + x, t[h + f"output.LayerNorm.{g}"], t[h + f"output.LayerNorm.{b}"], eps)
    if not mlm:
        return x, torch.stack(atts)
    c = "cls.predictions."
    y = f(lin(x, t[c + "transform.dense.weight"], t[c + "transform.dense.bias"]))
    y = layer_norm(y, t[c + f"transform.LayerNorm.{g}"], t[c + f"transform.LayerNorm.{b}"], eps)
    return lin(y, t[e + "word_embeddings.weight"], t[c + "bias"]), torch.stack(atts)
