# SPDX-License-Identifier: GPL-3.0-or-later
"""ESM2 and DPLM checkpoints in their published layout, and their logits, without `transformers`
(not packaged for Debian 12): a reference written from transformers' EsmForMaskedLM
(src/transformers/models/esm/modeling_esm.py) that d2dpo's native network is held to.

    python3 python/esm_published.py write DIR --size 8M [--prefix net.] [--dtype bf16]
        writes DIR/model.safetensors, config.json and vocab.txt with random weights, as
        save_pretrained writes a model (the tied decoder left out)
    python3 python/esm_published.py logits DIR OUT.safetensors [--ids IN.safetensors | --batch B --length L]
        writes the ids and the full logits [B, L, 33] that transformers would compute
    python3 python/esm_published.py recount SAMPLES.txt --composition KR
        prints the task's metrics recounted from an export's samples (VSR, the composition share)

The safetensors files are written and read by hand (the format is 8 bytes of header length, a JSON
header, then the tensors' bytes), since the `safetensors` package is not packaged either.
"""
import argparse
import json
import math
import os
import struct
import sys

import torch

# name: (layers, hidden, heads); intermediate is 4x hidden (ESM2's published shapes).
SIZES = {"tiny": (2, 64, 4), "8M": (6, 320, 20), "35M": (12, 480, 20), "150M": (30, 640, 20), "650M": (33, 1280, 20)}
TOKENS = ["<cls>", "<pad>", "<eos>", "<unk>"] + list("LAGVSERTIDPKQNFYMHWCXBUZO.-") + ["<null_1>", "<mask>"]
RESIDUES = "ACDEFGHIKLMNPQRSTVWY"
DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16, "I64": torch.int64, "F64": torch.float64}
NAMES = {v: k for k, v in DTYPES.items()}


def write_safetensors(path, tensors, metadata=None):
    header, offset, blobs = {}, 0, []
    if metadata:
        header["__metadata__"] = metadata
    for name, t in tensors.items():
        t = t.detach().contiguous().cpu()
        raw = t.view(torch.int16).numpy().tobytes() if t.dtype == torch.bfloat16 else t.numpy().tobytes()
        header[name] = {"dtype": NAMES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
        blobs.append(raw)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path + ".part", "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for raw in blobs:
            f.write(raw)
    os.replace(path + ".part", path)


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        dtype = DTYPES[entry["dtype"]]
        raw = bytearray(body[begin:end])
        if dtype == torch.bfloat16:
            t = torch.frombuffer(raw, dtype=torch.int16).view(torch.bfloat16)
        else:
            t = torch.frombuffer(raw, dtype=dtype)
        out[name] = t.reshape(entry["shape"]).clone()
    return out


def config_for(size, tied=True, token_dropout=True):
    layers, hidden, heads = SIZES[size]
    config = {
        "architectures": ["EsmForMaskedLM"], "model_type": "esm", "attention_probs_dropout_prob": 0.0,
        "emb_layer_norm_before": False, "hidden_act": "gelu", "hidden_dropout_prob": 0.0, "hidden_size": hidden,
        "initializer_range": 0.02, "intermediate_size": 4 * hidden, "layer_norm_eps": 1e-05, "mask_token_id": 32,
        "max_position_embeddings": 1026, "num_attention_heads": heads, "num_hidden_layers": layers, "pad_token_id": 1,
        "position_embedding_type": "rotary", "token_dropout": token_dropout, "torch_dtype": "float32",
        "vocab_size": len(TOKENS), "use_cache": True, "is_folding_model": False,
    }
    if not tied:
        config["tie_word_embeddings"] = False
    return config


def random_weights(config, seed, passengers=True):
    g = torch.Generator().manual_seed(seed)
    e, ff, v = config["hidden_size"], config["intermediate_size"], config["vocab_size"]

    def normal(*shape, std=0.02):
        return torch.randn(*shape, generator=g) * std

    w = {"esm.embeddings.word_embeddings.weight": normal(v, e, std=0.1)}
    for i in range(config["num_hidden_layers"]):
        p = f"esm.encoder.layer.{i}."
        for name in ("query", "key", "value"):
            w[p + f"attention.self.{name}.weight"] = normal(e, e, std=1.5 / math.sqrt(e))
            w[p + f"attention.self.{name}.bias"] = normal(e)
        w[p + "attention.output.dense.weight"] = normal(e, e, std=1 / math.sqrt(e))
        w[p + "attention.output.dense.bias"] = normal(e)
        w[p + "attention.LayerNorm.weight"] = 1 + normal(e, std=0.1)
        w[p + "attention.LayerNorm.bias"] = normal(e, std=0.1)
        w[p + "intermediate.dense.weight"] = normal(ff, e, std=1 / math.sqrt(e))
        w[p + "intermediate.dense.bias"] = normal(ff)
        w[p + "output.dense.weight"] = normal(e, ff, std=1 / math.sqrt(ff))
        w[p + "output.dense.bias"] = normal(e)
        w[p + "LayerNorm.weight"] = 1 + normal(e, std=0.1)
        w[p + "LayerNorm.bias"] = normal(e, std=0.1)
        if passengers:
            w[p + "attention.self.rotary_embeddings.inv_freq"] = 1.0 / (
                10000 ** (torch.arange(0, e // config["num_attention_heads"], 2).float() / (e // config["num_attention_heads"])))
    w["esm.encoder.emb_layer_norm_after.weight"] = 1 + normal(e, std=0.1)
    w["esm.encoder.emb_layer_norm_after.bias"] = normal(e, std=0.1)
    if passengers:
        heads = config["num_hidden_layers"] * config["num_attention_heads"]
        w["esm.contact_head.regression.weight"] = normal(1, heads)
        w["esm.contact_head.regression.bias"] = normal(1)
    w["lm_head.dense.weight"] = normal(e, e, std=1 / math.sqrt(e))
    w["lm_head.dense.bias"] = normal(e)
    w["lm_head.layer_norm.weight"] = 1 + normal(e, std=0.1)
    w["lm_head.layer_norm.bias"] = normal(e, std=0.1)
    w["lm_head.bias"] = normal(v)
    if config.get("tie_word_embeddings", True) is False:
        w["lm_head.decoder.weight"] = normal(v, e, std=0.1)
    return w


def write(folder, size, seed=0, prefix="", dtype="F32", tied=True, token_dropout=True, passengers=True):
    os.makedirs(folder, exist_ok=True)
    config = config_for(size, tied, token_dropout)
    weights = random_weights(config, seed, passengers)
    tensors = {prefix + k: (t.to(DTYPES[dtype]) if t.is_floating_point() else t) for k, t in weights.items()}
    write_safetensors(os.path.join(folder, "model.safetensors"), tensors, {"format": "pt"})
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    with open(os.path.join(folder, "vocab.txt"), "w") as f:
        f.write("\n".join(TOKENS) + "\n")


def gelu(x):
    return x * 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def esm_logits(config, weights, ids, prefix=""):
    """transformers' EsmForMaskedLM(input_ids=ids).logits, attention_mask None (all ones), eval
    mode, computed in float64: the reference d2dpo's network is held to."""
    return EsmEager(config, weights, prefix).double()(ids)


class EsmEager(torch.nn.Module):
    """transformers' EsmForMaskedLM as PyTorch eager runs it (float32, its modules and operators),
    on a published checkpoint's weights: the peer d2dpo's native network is timed against."""

    def __init__(self, config, weights, prefix=""):
        super().__init__()
        self.config = config
        self.params = torch.nn.ParameterDict()
        for k, v in weights.items():
            if k.startswith(prefix) and v.is_floating_point() and "inv_freq" not in k and "contact_head" not in k \
                    and "pooler" not in k:
                key = k[len(prefix):].replace(".", "__")
                self.params[key] = torch.nn.Parameter(v.float().clone())

    def p(self, name):
        return self.params[name.replace(".", "__")]

    def forward(self, ids):
        c = self.config
        e, heads, eps = c["hidden_size"], c["num_attention_heads"], c["layer_norm_eps"]
        width = e // heads
        ln = lambda x, n: torch.nn.functional.layer_norm(x, (e,), self.p(n + ".weight"), self.p(n + ".bias"), eps)
        lin = lambda x, n: torch.nn.functional.linear(x, self.p(n + ".weight"), self.p(n + ".bias"))
        b, n = ids.shape
        x = torch.nn.functional.embedding(ids, self.p("esm.embeddings.word_embeddings.weight"))
        if c.get("token_dropout", False):
            masked = ids == c["mask_token_id"]
            x = x.masked_fill(masked.unsqueeze(-1), 0.0)
            x = x * (1 - 0.15 * 0.8) / (1 - masked.sum(-1).to(x.dtype) / n)[:, None, None]
        if c.get("emb_layer_norm_before", False):
            x = ln(x, "esm.embeddings.layer_norm")
        # RotaryEmbedding: inv_freq and the angles in float32, as its buffer is
        inv_freq = 1.0 / (10000 ** (torch.arange(0, width, 2, dtype=torch.int64).float() / width))
        emb = torch.cat([torch.outer(torch.arange(n).float(), inv_freq)] * 2, -1).to(x.dtype)
        cos, sin = emb.cos()[None, None], emb.sin()[None, None]
        for i in range(c["num_hidden_layers"]):
            p = f"esm.encoder.layer.{i}."
            h = ln(x, p + "attention.LayerNorm")
            split = lambda t: t.view(b, n, heads, width).transpose(1, 2)
            q = split(lin(h, p + "attention.self.query")) * width ** -0.5
            k = split(lin(h, p + "attention.self.key"))
            v = split(lin(h, p + "attention.self.value"))
            q = q * cos + rotate_half(q) * sin
            k = k * cos + rotate_half(k) * sin
            context = torch.softmax(q @ k.transpose(-1, -2), -1) @ v
            x = lin(context.transpose(1, 2).reshape(b, n, e), p + "attention.output.dense") + x
            x = lin(gelu(lin(ln(x, p + "LayerNorm"), p + "intermediate.dense")), p + "output.dense") + x
        x = ln(x, "esm.encoder.emb_layer_norm_after")
        x = ln(gelu(lin(x, "lm_head.dense")), "lm_head.layer_norm")
        tied = c.get("tie_word_embeddings", True) is not False
        decoder = self.p("esm.embeddings.word_embeddings.weight" if tied else "lm_head.decoder.weight")
        return torch.nn.functional.linear(x, decoder, self.p("lm_head.bias"))


def bench(folder, length, pairs, threads, min_seconds, device="cpu"):
    """Seconds per D2-DPO step of `pairs` pairs in eager PyTorch (policy and frozen reference, Adam),
    the same step d2dpo times: each pair's winner and loser masked at one t, the log-likelihood of
    the masked residues weighted 1/(1-t), -log sigmoid(beta margin)."""
    import copy
    import time
    torch.set_num_threads(threads)
    device = torch.device(device)
    sync = (lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else (lambda: None)
    config, weights, prefix = load(folder)
    model = EsmEager(config, weights, prefix).to(device)
    reference = copy.deepcopy(model).eval()
    for q in reference.parameters():
        q.requires_grad_(False)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-5)
    residues = torch.tensor(sorted(TOKENS.index(c) for c in RESIDUES), device=device)

    def framed(body):
        b = body.shape[0]
        return torch.cat([torch.zeros(b, 1, dtype=torch.long, device=device), body,
                          torch.full((b, 1), 2, dtype=torch.long, device=device)], 1)

    def step():
        winners = framed(residues[torch.randint(0, 20, (pairs, length), device=device)])
        losers = framed(residues[torch.randint(0, 20, (pairs, length), device=device)])
        t = torch.rand(pairs, device=device)
        masked = torch.rand(pairs, length + 2, device=device) >= t.unsqueeze(1)
        masked[:, 0] = masked[:, -1] = False
        both = torch.cat([winners, losers])
        mask2 = torch.cat([masked, masked])
        noisy = torch.where(mask2, torch.full_like(both, 32), both)
        tt = torch.cat([t, t])

        def log_likelihood(net):
            logp = torch.log_softmax(net(noisy)[..., residues], -1)
            index = torch.searchsorted(residues, both.clamp(min=int(residues[0]))).clamp(max=19)
            picked = logp.gather(-1, index.unsqueeze(-1)).squeeze(-1)
            return (picked * mask2).sum(1) / (1 - tt).clamp(min=1e-3)

        with torch.no_grad():
            ref = log_likelihood(reference)
        pol = log_likelihood(model)
        margin = (pol[:pairs] - ref[:pairs]) - (pol[pairs:] - ref[pairs:])
        loss = -torch.nn.functional.logsigmoid(0.1 * margin).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    step()
    sync()
    times = []
    start = time.perf_counter()
    while time.perf_counter() - start < min_seconds or len(times) < 3:
        t0 = time.perf_counter()
        step()
        sync()
        times.append(time.perf_counter() - t0)
    times.sort()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], with_flops=True) as profiled:
        step()
        sync()
    a, b = torch.randn(1024, 1024, device=device), torch.randn(1024, 1024, device=device)
    torch.mm(a, b)
    sync()
    t0 = time.perf_counter()
    for _ in range(20):
        torch.mm(a, b)
    sync()
    sgemm = 20 * 2 * 1024 ** 3 / (time.perf_counter() - t0) / 1e9
    print(json.dumps({"seconds_per_step": times[len(times) // 2], "gflop_per_step":
                      sum(e.flops for e in profiled.key_averages()) / 1e9, "sgemm_gflops": sgemm,
                      "runtime": f"python {torch.__version__}, {torch.get_num_threads()} thread(s)"}))


def load(folder):
    with open(os.path.join(folder, "config.json")) as f:
        config = json.load(f)
    weights = read_safetensors(os.path.join(folder, "model.safetensors"))
    prefix = "net." if all(k.startswith("net.") for k in weights) else ""
    return config, weights, prefix


def random_ids(batch, length, seed):
    """<cls> residues (a third of them <mask>) <eos>: what d2dpo feeds the network."""
    g = torch.Generator().manual_seed(seed)
    residue_ids = torch.tensor([TOKENS.index(c) for c in RESIDUES])
    ids = residue_ids[torch.randint(0, len(RESIDUES), (batch, length - 2), generator=g)]
    ids = torch.where(torch.rand(batch, length - 2, generator=g) < 0.35, torch.tensor(32), ids)
    ids[0, : (length - 2) // 2] = 32  # one row mostly masked: token dropout's scale at its largest
    return torch.cat([torch.zeros(batch, 1, dtype=torch.long), ids, torch.full((batch, 1), 2)], 1)


def recount(samples, composition, alphabet=RESIDUES):
    """The task's metrics recounted from an export's samples.txt: the share of valid samples (the
    alphabet's symbols only: the 20 residues) and the composition rule's mean share of
    `composition`'s symbols."""
    with open(samples) as f:
        rows = [line.split("\t")[0] for line in f if line.strip() and not line.startswith("#")]
    valid = [r for r in rows if r and all(c in alphabet for c in r)]
    share = sum(sum(c in composition for c in r) / len(r) for r in valid) / max(1, len(valid))
    print(json.dumps({"samples": len(rows), "vsr": len(valid) / max(1, len(rows)), "rule_share": share}))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    w = sub.add_parser("write")
    w.add_argument("folder")
    w.add_argument("--size", choices=SIZES, default="8M")
    w.add_argument("--seed", type=int, default=0)
    w.add_argument("--prefix", default="")
    w.add_argument("--dtype", choices=["F32", "F16", "BF16"], default="F32")
    w.add_argument("--untied", action="store_true")
    w.add_argument("--no-token-dropout", action="store_true")
    w.add_argument("--no-passengers", action="store_true")
    lg = sub.add_parser("logits")
    lg.add_argument("folder")
    lg.add_argument("out")
    lg.add_argument("--ids")
    lg.add_argument("--batch", type=int, default=2)
    lg.add_argument("--length", type=int, default=52, help="ids per sequence, <cls> and <eos> included")
    lg.add_argument("--seed", type=int, default=1)
    bn = sub.add_parser("bench")
    bn.add_argument("folder")
    bn.add_argument("--length", type=int, default=150, help="residues")
    bn.add_argument("--pairs", type=int, default=8)
    bn.add_argument("--threads", type=int, default=1)
    bn.add_argument("--min-seconds", type=float, default=3.0)
    bn.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    rc = sub.add_parser("recount")
    rc.add_argument("samples")
    rc.add_argument("--composition", required=True, help="the residues of the composition rule, e.g. KR")
    a = parser.parse_args()
    if a.command != "bench":
        torch.set_num_threads(max(1, os.cpu_count() or 1))
    if a.command == "write":
        write(a.folder, a.size, a.seed, a.prefix, a.dtype, not a.untied, not a.no_token_dropout, not a.no_passengers)
    elif a.command == "bench":
        bench(a.folder, a.length, a.pairs, a.threads, a.min_seconds, a.device)
    elif a.command == "logits":
        config, weights, prefix = load(a.folder)
        ids = read_safetensors(a.ids)["ids"] if a.ids else random_ids(a.batch, a.length, a.seed)
        with torch.no_grad():
            logits = esm_logits(config, weights, ids, prefix)
        write_safetensors(a.out, {"ids": ids.long(), "logits": logits.double()})
    else:
        recount(a.samples, a.composition)


if __name__ == "__main__":
    sys.exit(main())
