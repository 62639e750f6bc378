#!/usr/bin/env python3
"""csv2model.py - build coarse-plan model JSON from the per-tensor CSVs.

Usage: tools/csv2model.py SRC_DIR OUT_DIR     (or: make models)

SRC_DIR is ../shared/data/models (columns index,name,shape,numel,bytes_fp32,
bytes_fp16, one row per trainable tensor in PyTorch registration order).  For
each shipped model this writes OUT_DIR/<name>.json with:

  * every tensor, its shape and the layer (module) that owns it;
  * the layers in forward execution order, each with its forward FLOPs per
    sample, computed here from the architecture (docs/models.md derives each
    formula), including parameter-free layers whose compute matters for when
    gradients become ready: attention scores, and GPT-2's lm_head, whose
    weight is tied to the token embedding and so appears only once.

FLOPs count a multiply-add as 2.  Element-wise layers (BatchNorm, LayerNorm,
biases) are charged a few FLOPs per element; they are small either way.
The output is deterministic: same CSV in, same bytes out.
"""
import csv
import json
import os
import re
import sys

# (output name, CSV file, published parameter total, description, flops fn)
SOURCES = []


def read_csv(path):
    rows = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            shape = [int(x) for x in r["shape"].split("x")] if r["shape"] else [int(r["numel"])]
            rows.append({"name": r["name"], "shape": shape, "numel": int(r["numel"])})
    return rows


def module_of(name):
    return name.rsplit(".", 1)[0] if "." in name else name


def prod(xs):
    p = 1
    for x in xs:
        p *= x
    return p


# ---------------------------------------------------------------- ResNet-50
# torchvision resnet50 (v1.5: stride 2 on the 3x3 conv), 224x224 input.
RESNET_OUT = {1: 56, 2: 28, 3: 14, 4: 7}


def resnet_hw(module):
    """Output spatial size (H = W) of a conv/bn module."""
    if module in ("conv1", "bn1"):
        return 112
    m = re.match(r"layer(\d)\.(\d+)\.(.+)$", module)
    if not m:
        raise ValueError(module)
    stage, block, part = int(m.group(1)), int(m.group(2)), m.group(3)
    out = RESNET_OUT[stage]
    if block == 0 and part in ("conv1", "bn1"):
        return 56 if stage == 1 else out * 2  # 1x1 conv before the strided 3x3
    return out


def resnet_flops(module, tensors):
    w = tensors[0]["shape"]
    if module == "fc":
        return 2 * w[0] * w[1] + w[0]
    hw = resnet_hw(module)
    if len(w) == 4:  # conv: 2 * Cout * Cin * kh * kw * H * W
        return 2 * prod(w) * hw * hw
    return 4 * w[0] * hw * hw  # batch norm: normalise, scale, shift


# ---------------------------------------------------------------- VGG-16
# torchvision vgg16 (no BN), 224x224 input; features index -> output size.
VGG_HW = {0: 224, 2: 224, 5: 112, 7: 112, 10: 56, 12: 56, 14: 56,
          17: 28, 19: 28, 21: 28, 24: 14, 26: 14, 28: 14}


def vgg_flops(module, tensors):
    w = tensors[0]["shape"]
    kind, idx = module.split(".")
    if kind == "features":
        hw = VGG_HW[int(idx)]
        return 2 * prod(w) * hw * hw + w[0] * hw * hw
    return 2 * w[0] * w[1] + w[0]


# ---------------------------------------------------------------- BERT
BERT_SEQ = 128  # phase-1 pre-training sequence length


def bert_flops(module, tensors, hidden):
    s = BERT_SEQ
    w = tensors[0]["shape"]
    if module.endswith("embeddings"):
        return 0  # lookups
    if "LayerNorm" in module:
        return 5 * s * w[0]
    if module.endswith("pooler.dense"):
        return 2 * w[0] * w[1]  # first token only
    if len(w) == 2:  # nn.Linear(in, out): weight is [out, in]
        return 2 * s * w[0] * w[1] + s * w[0]
    raise ValueError(module)


def bert_extra(module, hidden):
    """Parameter-free layers inserted after `module` in forward order."""
    if re.search(r"attention\.self\.value$", module):
        s = BERT_SEQ
        return [(module.replace("self.value", "self.scores"), 4 * s * s * hidden)]
    return []


# ---------------------------------------------------------------- GPT-2
GPT2_SEQ = 1024  # GPT-2 context length


def gpt2_flops(module, tensors, hidden):
    s = GPT2_SEQ
    w = tensors[0]["shape"]
    if module in ("transformer.wte", "transformer.wpe"):
        return 0
    if "ln_" in module:
        return 5 * s * w[0]
    if len(w) == 2:  # Conv1D(nx, nf): weight is [in, out]
        return 2 * s * w[0] * w[1] + s * w[1]
    raise ValueError(module)


def gpt2_extra(module, hidden, vocab):
    s = GPT2_SEQ
    if module.endswith("attn.c_attn"):
        return [(module.replace("c_attn", "scores"), 4 * s * s * hidden)]
    if module == "transformer.ln_f":
        # lm_head: weight tied to transformer.wte (counted there), compute here
        return [("lm_head", 2 * s * hidden * vocab)]
    return []


# ---------------------------------------------------------------- driver
# Per-GPU batch each model is usually trained with on a 16 GB V100, FP32
# (resnet50: NVIDIA DeepLearningExamples; vgg16: tensorflow benchmarks; BERT
# phase 1 and GPT-2: what fits, an assumption).  Only used to estimate
# compute when no measured time is given (docs/model.md, eq. P0).
BATCH = {"resnet50": 112, "vgg16": 64, "bert-base": 32, "bert-large": 16, "gpt2": 8,
         "gpt2-medium": 4}


# Transformer architecture (docs/formats.md, "Transformer"; the activation
# estimate of docs/model.md, eq. M2), from the models' published configs:
# BertModel has no head (no logits); GPT2LMHeadModel's lm_head computes
# logits over the 50,257-token vocabulary with the token embedding's weight
# (tied).  Both use GELU MLPs of 4 x hidden, LayerNorm, biases on every
# projection, learned position tables (BERT 512 rows, GPT-2 1024) and
# dropout 0.1.
TRANSFORMER = {
    "bert-base": {"layers": 12, "hidden": 768, "heads": 12, "ffn": 3072, "seq": BERT_SEQ,
                  "max_positions": 512},
    "bert-large": {"layers": 24, "hidden": 1024, "heads": 16, "ffn": 4096, "seq": BERT_SEQ,
                   "max_positions": 512},
    "gpt2": {"layers": 12, "hidden": 768, "heads": 12, "ffn": 3072, "seq": GPT2_SEQ,
             "vocab": 50257, "max_positions": 1024, "tied": True},
    "gpt2-medium": {"layers": 24, "hidden": 1024, "heads": 16, "ffn": 4096, "seq": GPT2_SEQ,
                    "vocab": 50257, "max_positions": 1024, "tied": True},
}


def build(rows, name, flops_fn, extra_fn, description):
    layers, tensors, index = [], [], {}
    for r in rows:
        mod = module_of(r["name"])
        if mod not in index:
            index[mod] = len(layers)
            layers.append({"name": mod, "tensors": []})
        layers[index[mod]]["tensors"].append(r)
    out_layers, layer_no = [], {}
    for l in layers:
        layer_no[l["name"]] = len(out_layers)
        out_layers.append({"name": l["name"], "flops": flops_fn(l["name"], l["tensors"])})
        for (xname, xflops) in extra_fn(l["name"]):
            out_layers.append({"name": xname, "flops": xflops})
    for r in rows:
        tensors.append({"name": r["name"], "shape": r["shape"],
                        "layer": layer_no[module_of(r["name"])]})
    model = {"name": name, "note": description, "dtype": "fp32",
             "compute": {"batch": BATCH[name], "note": "per-GPU batch (assumed except resnet50, "
                         "vgg16: docs/models.md); no measured time"},
             "layers": out_layers, "tensors": tensors}
    if name in TRANSFORMER:
        model["transformer"] = dict(TRANSFORMER[name], mlp="gelu", norm="layernorm",
                                    position="learned", qkv_bias=True, o_bias=True,
                                    mlp_bias=True, dropout=0.1)
    return model


def dump(model, path):
    """One tensor or layer per line: diffable, and error lines point somewhere useful."""
    lines = ["{"]
    lines.append('  "name": %s,' % json.dumps(model["name"]))
    lines.append('  "note": %s,' % json.dumps(model["note"]))
    lines.append('  "dtype": %s,' % json.dumps(model["dtype"]))
    lines.append('  "compute": %s,' % json.dumps(model["compute"]))
    if "transformer" in model:
        lines.append('  "transformer": %s,' % json.dumps(model["transformer"]))
    lines.append('  "layers": [')
    lines.append(",\n".join("    " + json.dumps(l, separators=(", ", ": ")) for l in model["layers"]))
    lines.append("  ],")
    lines.append('  "tensors": [')
    lines.append(",\n".join("    " + json.dumps(t, separators=(", ", ": ")) for t in model["tensors"]))
    lines.append("  ]")
    lines.append("}")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, path)


def refuse(msg):
    """Bad input (no data, a CSV missing): one line on stderr, exit 2, as
    coarse-plan does; never a traceback."""
    sys.stderr.write("csv2model.py: %s\n" % msg)
    sys.exit(2)


def main():
    if len(sys.argv) != 3:
        sys.stderr.write(__doc__)
        sys.exit(2)
    src, out = sys.argv[1], sys.argv[2]
    if not os.path.isdir(src):
        refuse("%s: no such directory: the per-tensor CSVs are the reference data beside the "
               "project (../shared/data/models, see docs/models.md for their public sources); "
               "models/*.json are already built from them" % src)
    specs = [
        ("resnet50", "resnet50_torchvision.csv", 25557032, "torchvision resnet50 (v1.5), 224x224",
         resnet_flops, lambda m: []),
        ("vgg16", "vgg16_torchvision.csv", 138357544, "torchvision vgg16 (no BN), 224x224",
         vgg_flops, lambda m: []),
        ("bert-base", "bert-base-uncased_BertModel.csv", 109482240,
         "HF BertModel bert-base-uncased, sequence 128",
         lambda m, t: bert_flops(m, t, 768), lambda m: bert_extra(m, 768)),
        ("bert-large", "bert-large-uncased_BertModel.csv", 335141888,
         "HF BertModel bert-large-uncased, sequence 128",
         lambda m, t: bert_flops(m, t, 1024), lambda m: bert_extra(m, 1024)),
        ("gpt2", "gpt2_124M_GPT2LMHeadModel.csv", 124439808,
         "HF GPT2LMHeadModel gpt2 (124M, lm_head tied to wte), context 1024",
         lambda m, t: gpt2_flops(m, t, 768), lambda m: gpt2_extra(m, 768, 50257)),
        ("gpt2-medium", "gpt2-medium_345M_GPT2LMHeadModel.csv", 354823168,
         "HF GPT2LMHeadModel gpt2-medium (345M, lm_head tied to wte), context 1024",
         lambda m, t: gpt2_flops(m, t, 1024), lambda m: gpt2_extra(m, 1024, 50257)),
    ]
    for (name, fname, total, desc, ffn, xfn) in specs:
        if not os.path.isfile(os.path.join(src, fname)):
            refuse("%s: no such file in %s (../shared/data/README.md lists the CSVs)"
                   % (fname, src))
    for (name, fname, total, desc, ffn, xfn) in specs:
        rows = read_csv(os.path.join(src, fname))
        params = sum(r["numel"] for r in rows)
        for r in rows:
            if prod(r["shape"]) != r["numel"]:
                sys.exit("%s: %s shape %s != numel %d" % (fname, r["name"], r["shape"], r["numel"]))
        if params != total:
            sys.exit("%s: %d parameters, published %d" % (fname, params, total))
        note = "%s; %d tensors, %d parameters; from %s" % (desc, len(rows), params, fname)
        dump(build(rows, name, ffn, xfn, note), os.path.join(out, name + ".json"))
        print("%s: %d tensors, %d parameters" % (name, len(rows), params))


if __name__ == "__main__":
    main()
