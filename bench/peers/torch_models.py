#!/usr/bin/env python3
"""The PyTorch peer of bench/run's model workloads: the MLP, the attention
block and the transformer layer of bench/lib (the same shapes, the same ops,
float32), forward only, in one process on THREADS threads.

  torch_models.py MODEL THREADS REPEATS [--batch N ...] [--inputs DIR]
      one "time S" per run, on the parameters DIR/NAME.npy (or made here)
  torch_models.py MODEL 1 1 [sizes] --write-inputs DIR
      the parameters, initialized as torch.nn initializes them, as DIR/NAME.npy
  torch_models.py MODEL 1 1 [sizes] --inputs DIR --output FILE.npy
      one run, its result written to FILE.npy
  torch_models.py --version                               torch's version

The parameters are those of a freshly initialized model: weights uniform in
+-1/sqrt(fan_in) (nn.Linear's default), layer-norm gains and biases near 1
and 0, activations uniform in [-1, 1). With weights of unit scale instead,
the attention scores reach the hundreds, softmax's exp underflows into
denormals, and the timings measure the CPU's denormal slow path instead.

Each model can be written the way a PyTorch user writes it by hand
(`--style functional`: addmm, matmul, softmax, layer_norm) or with torch.nn's
modules (`--style modules`: nn.MultiheadAttention, nn.TransformerEncoderLayer,
whose inference fast path fuses the attention); bench/run times both and
compares with the faster.
"""
import argparse
import os
import sys
import time


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("model", nargs="?", choices=["mlp", "attention", "transformer"])
    p.add_argument("threads", nargs="?", type=int)
    p.add_argument("repeats", nargs="?", type=int)
    p.add_argument("--version", action="store_true", help="print torch's version")
    p.add_argument("--style", choices=["functional", "modules"], default="functional")
    for size in ("batch", "seq", "model-dim", "heads", "head-dim", "hidden"):
        p.add_argument(f"--{size}", type=int, default=0)
    p.add_argument("--warmup", type=int, default=2, help="untimed runs first")
    p.add_argument("--inputs", help="a directory of NAME.npy, one per parameter")
    p.add_argument("--output", help="where --inputs' result goes (.npy)")
    p.add_argument("--write-inputs", help="a directory to write the parameters to")
    args = p.parse_args()
    if not args.version:
        if args.model is None or args.threads is None or args.repeats is None:
            p.error("MODEL THREADS REPEATS are required")
        if args.threads <= 0 or args.repeats <= 0:
            p.error("THREADS and REPEATS must be positive")
        if args.output is not None and args.inputs is None:
            p.error("--output needs --inputs")
    return args


ARGS = parse()
if ARGS.threads:
    # Debian's torch multiplies through OpenBLAS (pthreads) and runs its own
    # loops on OpenMP: both pools get THREADS, read when the libraries load.
    os.environ["OMP_NUM_THREADS"] = os.environ["OPENBLAS_NUM_THREADS"] = str(ARGS.threads)
try:
    import torch
    import torch.nn.functional as F
except ImportError:
    sys.exit(f"{sys.argv[0]}: PyTorch is not installed for {sys.executable} "
             "(Debian: apt-get install python3-torch)")

# The size options each model needs.
SIZES = {"mlp": ("batch", "model_dim", "hidden"),
         "attention": ("batch", "seq", "heads", "head_dim"),
         "transformer": ("batch", "seq", "heads", "head_dim", "hidden")}


def shapes(a):
    """Each parameter's shape, as bench/lib's programs declare it."""
    if a.model == "mlp":
        m, h = a.model_dim, a.hidden
        return {"x": (a.batch, m), "w1": (m, h), "b1": (h,), "w2": (h, m), "b2": (m,)}
    m, per_head = a.heads * a.head_dim, (a.heads, a.head_dim)
    out = {"x": (a.batch, a.seq, m), "wq": (m,) + per_head, "wk": (m,) + per_head,
           "wv": (m,) + per_head, "wo": per_head + (m,)}
    if a.model == "transformer":
        out.update({"g1": (m,), "b1": (m,), "g2": (m,), "b2": (m,), "w1": (m, a.hidden),
                    "w2": (a.hidden, m)})
    return out


def scale(head_dim):
    """The score scale as the shardc program spells its constant."""
    return float(f"{head_dim ** -0.5:.6f}")


def mlp(p):
    """relu(x W1 + b1) W2 + b2, as nn.Linear computes it (addmm)."""
    h = torch.relu(torch.addmm(p["b1"], p["x"], p["w1"]))
    return torch.addmm(p["b2"], h, p["w2"])


class Functional:
    """The attention block and transformer layer written out by hand, as in
    Megatron's and nanoGPT's code: one matmul for Q, K and V together."""

    def __init__(self, p, a):
        m = a.heads * a.head_dim
        self.p, self.a, self.m = p, a, m
        self.wqkv = torch.cat([p[n].reshape(m, m) for n in ("wq", "wk", "wv")], 1)
        self.wo = p["wo"].reshape(m, m)

    def attend(self, h):
        """The attention output of `h` (projected back to the model dim)."""
        a = self.a
        b, s = h.shape[0], h.shape[1]
        qkv = (h.reshape(b * s, self.m) @ self.wqkv).view(b, s, 3, a.heads, a.head_dim)
        q, k, v = (qkv[:, :, i].transpose(1, 2) for i in range(3))  # b h s d
        probs = torch.softmax((q @ k.transpose(-1, -2)) * scale(a.head_dim), dim=-1)
        o = (probs @ v).transpose(1, 2).reshape(b * s, self.m)
        return (o @ self.wo).view(b, s, self.m)

    def attention(self, x):
        return x + self.attend(x)

    def transformer(self, x):
        p, m = self.p, self.m
        r = x + self.attend(F.layer_norm(x, (m,), p["g1"], p["b1"], 1e-5))
        h = F.layer_norm(r, (m,), p["g2"], p["b2"], 1e-5)
        return r + torch.relu(h @ p["w1"]) @ p["w2"]


class Modules:
    """The same models from torch.nn's modules, loaded with the same weights
    (nn.Linear keeps W transposed; its biases are zero: the shardc programs
    have none there)."""

    def __init__(self, p, a):
        m = a.heads * a.head_dim
        self.p, self.a = p, a
        if a.model == "attention":
            self.mha = torch.nn.MultiheadAttention(m, a.heads, batch_first=True)
            self._load_attention(self.mha)
            self.mha.eval()
        else:
            layer = torch.nn.TransformerEncoderLayer(m, a.heads, a.hidden, dropout=0.0,
                                                     activation="relu", batch_first=True,
                                                     norm_first=True, layer_norm_eps=1e-5)
            self._load_attention(layer.self_attn)
            with torch.no_grad():
                for norm, g, b in ((layer.norm1, "g1", "b1"), (layer.norm2, "g2", "b2")):
                    norm.weight.copy_(p[g])
                    norm.bias.copy_(p[b])
                layer.linear1.weight.copy_(p["w1"].t())
                layer.linear2.weight.copy_(p["w2"].t())
                layer.linear1.bias.zero_()
                layer.linear2.bias.zero_()
            self.layer = layer.eval()

    def _load_attention(self, mha):
        p, m = self.p, self.a.heads * self.a.head_dim
        with torch.no_grad():
            mha.in_proj_weight.copy_(torch.cat([p[n].reshape(m, m).t() for n in
                                                ("wq", "wk", "wv")], 0))
            mha.in_proj_bias.zero_()
            mha.out_proj.weight.copy_(p["wo"].reshape(m, m).t())
            mha.out_proj.bias.zero_()

    def attention(self, x):
        return x + self.mha(x, x, x, need_weights=False)[0]

    def transformer(self, x):
        return self.layer(x)


def forward(a, p):
    """The model of `a` on the parameters `p`: a function of no arguments."""
    if a.model == "mlp":
        return lambda: mlp(p)
    impl = (Functional if a.style == "functional" else Modules)(p, a)
    fn = impl.attention if a.model == "attention" else impl.transformer
    return lambda: fn(p["x"])


def fan_in(a, name):
    """The inputs per output of the layer that parameter `name` belongs to."""
    m = a.model_dim if a.model == "mlp" else a.heads * a.head_dim
    return a.hidden if name == "w2" or (a.model == "mlp" and name == "b2") else m


def initial_params(a):
    """A freshly initialized model's parameters (see the top of the file),
    from a fixed seed."""
    gen = torch.Generator().manual_seed(1)
    out = {}
    for name, shape in shapes(a).items():
        if name == "x":
            low, high = -1.0, 1.0
        elif name in ("g1", "g2"):
            low, high = 0.5, 1.5  # not exactly 1, so that a gain read as a bias shows
        elif a.model != "mlp" and name in ("b1", "b2"):
            low, high = -0.5, 0.5
        else:
            high = fan_in(a, name) ** -0.5
            low = -high
        out[name] = torch.rand(shape, generator=gen) * (high - low) + low
    return out


def loaded_params(a, directory):
    """The parameters from DIRECTORY/NAME.npy, each checked against its shape."""
    import numpy
    out = {}
    for name, shape in shapes(a).items():
        try:
            value = numpy.load(os.path.join(directory, name + ".npy"))
        except (OSError, ValueError) as e:
            sys.exit(f"{sys.argv[0]}: cannot read {name}.npy: {e}")
        if tuple(value.shape) != shape or value.dtype != numpy.float32:
            sys.exit(f"{sys.argv[0]}: {name}.npy is {value.dtype} {value.shape}, "
                     f"expected float32 {shape}")
        out[name] = torch.from_numpy(value)
    return out


def main():
    a = ARGS
    if a.version:
        print(torch.__version__)
        return 0
    torch.set_num_threads(a.threads)
    missing = [s for s in SIZES[a.model] if getattr(a, s) <= 0]
    if missing:
        sys.exit(f"{sys.argv[0]}: {a.model} needs a positive --"
                 + ", --".join(m.replace("_", "-") for m in missing))
    with torch.inference_mode():
        params = loaded_params(a, a.inputs) if a.inputs else initial_params(a)
        if a.write_inputs:
            import numpy
            os.makedirs(a.write_inputs, exist_ok=True)
            for name, value in params.items():
                numpy.save(os.path.join(a.write_inputs, name + ".npy"), value.numpy())
            return 0
        run = forward(a, params)
        if a.output:
            import numpy
            numpy.save(a.output, run().contiguous().numpy())
            return 0
        for _ in range(a.warmup):
            run()
        for _ in range(a.repeats):
            start = time.perf_counter()
            run()
            print(f"time {time.perf_counter() - start:.9f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
