"""The model workloads of bench/run (issue 22): a two-layer MLP, an attention
block and a pre-norm transformer layer, each hand-sharded Megatron style in
shardc (hidden units and heads split over the ranks), against PyTorch in one
process with as many threads as ranks (bench/peers/torch_models.py), and
against the per-core matmul peak of OpenBLAS. The MLP keeps its OpenBLAS
peer (bench/peers/mlp_blas.c). Smoke runs check that shardc and PyTorch
compute the same thing: both run on the same .npy inputs and their results
are compared."""
import os
import re
import shutil
import sys

from . import auto_programs, programs
from .measure import BenchError, Sample, run
from .workloads import Result, in_rounds, median_profile

PEER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "peers",
                    "torch_models.py")
MISSING = ("PyTorch is not installed: the model workloads' peer needs Debian's "
           "python3-torch (apt-get install python3-torch; bench/run installs it "
           "through scripts/setup.sh --bench unless given --no-build), or "
           "$SHARDC_BENCH_TORCH_PYTHON naming a Python that imports torch")
STYLES = ("functional", "modules")


def _styles(kind):
    """The torch peer's styles for `kind`: the MLP has one (nn.Linear is addmm)."""
    return STYLES[:1] if kind == "mlp" else STYLES


def torch_python():
    """A Python that imports torch, or None: $SHARDC_BENCH_TORCH_PYTHON if
    set, else bench/run's own or /usr/bin/python3 (Debian's python3-torch is
    that one's; bench/run may run under another, a virtualenv or pyenv)."""
    chosen = os.environ.get("SHARDC_BENCH_TORCH_PYTHON")
    for python in [chosen] if chosen else dict.fromkeys([sys.executable, "/usr/bin/python3"]):
        try:
            run([python, PEER, "--version"], 120)
            return python
        except BenchError:
            continue
    return None


def _megatron(ranks):
    return [("x", ranks)], auto_programs.Plan("megatron", model=("x",))


def _sizes(c):
    """The size options of the torch peer for config `c`."""
    names = {"batch": "batch", "seq": "seq", "model": "model-dim", "heads": "heads",
             "head_dim": "head-dim", "hidden": "hidden"}
    return sum(([f"--{flag}", str(c[key])] for key, flag in names.items() if key in c), [])


def _model_source(kind, c):
    """The shardc program of `kind` under the Megatron plan, and its matmul
    FLOPs (every einsum and matmul: 2 per multiply-add)."""
    ranks = c["ranks"]
    if kind == "mlp":
        b, m, h = c["batch"], c["model"], c["hidden"]
        return programs.mlp(b, m, h, ranks), 4.0 * b * m * h
    mesh, plan = _megatron(ranks)
    b, s, heads, d = c["batch"], c["seq"], c["heads"], c["head_dim"]
    m = heads * d
    flops = 4 * 2.0 * b * s * m * m + 2 * 2.0 * b * heads * s * s * d
    if kind == "attention":
        return auto_programs.attention(mesh, plan, b, s, heads, d), flops
    return (auto_programs.transformer(mesh, plan, b, s, heads, d, c["hidden"]),
            flops + 4.0 * b * s * m * c["hidden"])


def _gemm_shapes(kind, c):
    """The GEMMs one rank of the Megatron `kind` calls, as (count, SHAPE) for
    bench-blas-shapes (BATCHxMxNxK, "t": B read transposed): the projections,
    attention's scores and weighted values, the output projection, and the
    transformer's two MLP matmuls. Their FLOPs are _model_source's, per rank."""
    ranks, b, s, d = c["ranks"], c["batch"], c["seq"], c["head_dim"]
    m, local_heads = c["heads"] * d, c["heads"] // ranks
    rows, local = b * s, local_heads * d
    shapes = [(3, f"1x{rows}x{local}x{m}"),
              (1, f"{b * local_heads}x{s}x{s}x{d}t"),
              (1, f"{b * local_heads}x{s}x{d}x{s}"),
              (1, f"1x{rows}x{m}x{local}")]
    if kind == "transformer":
        hidden = c["hidden"] // ranks
        shapes += [(1, f"1x{rows}x{hidden}x{m}"), (1, f"1x{rows}x{m}x{hidden}")]
    return shapes


def _param_names(source):
    """The names of @main's parameters in `source`, in order."""
    head = source[source.index("func @main("):source.index("->")]
    return re.findall(r"%(\w+):", head)


def write_inputs(b, kind, source, python, c):
    """The model's parameters as a freshly initialized torch.nn model has
    them, written once by the torch peer (DIR/NAME.npy): both sides compute
    on them. Returns the executable's --input options and DIR."""
    d = os.path.join(b.work, f"{kind}.inputs")
    shutil.rmtree(d, ignore_errors=True)
    run([python, PEER, kind, "1", "1", "--write-inputs", d] + _sizes(c), 600)
    inputs = sum((["--input", f"{n}={os.path.join(d, n + '.npy')}"]
                  for n in _param_names(source)), [])
    return inputs, d


def check_against_torch(b, kind, exe, python, c, inputs, d):
    """Smoke runs: shardc's executable and each style of the torch peer, on
    the same .npy inputs, give the same result."""
    out = os.path.join(b.work, f"{kind}.torch-check")
    shutil.rmtree(out, ignore_errors=True)  # an earlier run's results must not pass
    os.makedirs(out)
    run([b.mpiexec, "-n", str(c["ranks"]), exe, "--output-dir", os.path.join(out, "shardc")]
        + inputs, 300)
    for style in _styles(kind):
        result = os.path.join(out, f"torch-{style}.npy")
        run([python, PEER, kind, "1", "1", "--style", style, "--inputs", d, "--output", result]
            + _sizes(c), 300)
        run([b.compare, os.path.join(out, "shardc", "result0.npy"), result,
             "--rtol", "1e-4", "--atol", "1e-4"], 60)
    b.log(f"{kind}: shardc and PyTorch agree on the same inputs")


def _case(kind, c):
    ranks = c["ranks"]
    if kind == "mlp":
        return (f"batch {c['batch']}, model {c['model']}, hidden {c['hidden']}, f32, "
                f"Megatron, {ranks} ranks")
    return (f"batch {c['batch']}, seq {c['seq']}, {c['heads']} heads of {c['head_dim']}"
            + (f", hidden {c['hidden']}" if kind == "transformer" else "")
            + f", f32, heads{' and hidden' if kind == 'transformer' else ''} split, "
            f"{ranks} ranks")


def model_workload(b, kind, label):
    """shardc's Megatron-sharded `kind` against PyTorch (the faster of its
    styles) and against the OpenBLAS matmul peak per core; the MLP also
    against its OpenBLAS peer."""
    c = b.config[kind]
    ranks, repeats = c["ranks"], c["repeats"]
    python = torch_python()
    if python is None and not b.smoke:
        raise BenchError(MISSING)
    source, flops = _model_source(kind, c)
    exe = b.build(kind, source)
    inputs, d = write_inputs(b, kind, source, python, c) if python else ([], None)
    if b.smoke:
        b.check(exe, ranks, kind)
        if python is None:
            b.log(f"{kind}: {MISSING}; smoke run without the PyTorch peer")
        else:
            check_against_torch(b, kind, exe, python, c, inputs, d)
    styles = _styles(kind)
    measures = {"shardc": lambda: b.profile_once(exe, ranks, repeats, inputs),
                "gemm": lambda: b.peer_sample([b.peer("bench-blas-gemm"), "f32",
                                               str(c["gemm_n"]), str(ranks),
                                               str(repeats)]).times}
    if python is not None:
        for style in styles:
            measures[style] = (lambda style=style: b.peer_sample(
                [python, PEER, kind, str(ranks), str(repeats), "--style", style, "--inputs", d]
                + _sizes(c)).times)
    shapes = _gemm_shapes(kind, c) if kind != "mlp" else []
    for _, shape in shapes:
        measures["gemm " + shape] = (lambda shape=shape: b.peer_sample(
            [b.peer("bench-blas-shapes"), str(ranks), str(repeats), shape]).times)
    if kind == "mlp":
        measures["blas"] = lambda: b.peer_sample(
            [b.peer("bench-mlp-blas"), str(c["batch"]), str(c["model"]), str(c["hidden"]),
             str(ranks), str(repeats)]).times
    got = in_rounds(c["rounds"], measures)
    prof = median_profile(got["shardc"])
    case = _case(kind, c)
    ours = f"{prof.run_median * 1e3:.1f} ms ({prof.spread()})"
    results = []
    if python is not None:
        timed = {style: Sample(sum(got[style], [])) for style in styles}
        best = min(timed, key=lambda s: timed[s].median)
        note = ", ".join(f"{s} {t.median * 1e3:.1f} ms" for s, t in timed.items())
        results.append(Result(label, case, ours,
                              f"PyTorch {ranks} threads ({best}): "
                              f"{timed[best].median * 1e3:.1f} ms ({timed[best].spread()})",
                              timed[best].median / prof.run_median, 1.0, profile=prof,
                              note=f"PyTorch styles: {note}" if len(styles) > 1 else ""))
    if kind == "mlp":
        blas = Sample(sum(got["blas"], []))
        results.append(Result(label, case, ours, f"OpenBLAS {ranks} threads: "
                              f"{blas.median * 1e3:.1f} ms ({blas.spread()})",
                              blas.median / prof.run_median, 0.85, profile=prof))
    gemm = Sample(sum(got["gemm"], []))
    peak = 2.0 * c["gemm_n"] ** 3 / gemm.median / 1e9 / ranks
    per_core = flops / prof.run_median / 1e9 / ranks
    results.append(Result(label, case + ", matmul FLOPs per core",
                          f"{per_core:.1f} GFLOP/s per rank",
                          f"OpenBLAS sgemm N={c['gemm_n']}, {ranks} threads: {peak:.1f} GFLOP/s "
                          f"per thread ({gemm.spread()})", per_core / peak, 0.9, profile=prof,
                          note=f"{flops / 1e9:.2f} GFLOP of matmuls and einsums per run"))
    if shapes:
        # Each shape timed alone and repeated, its operands warm: the least
        # time any program calling OpenBLAS for the layer's GEMMs can take.
        alone = sum(count * Sample(sum(got["gemm " + shape], [])).median
                    for count, shape in shapes)
        ceiling = flops / alone / 1e9 / ranks
        results.append(Result(label, case + ", matmul FLOPs per core of the same GEMMs alone "
                              "in OpenBLAS (the ceiling)", f"{ceiling:.1f} GFLOP/s per rank",
                              f"OpenBLAS sgemm N={c['gemm_n']}, {ranks} threads: {peak:.1f} "
                              "GFLOP/s per thread", ceiling / peak, None,
                              note=f"the layer's GEMMs, each shape alone on one core per rank "
                              f"(bench-blas-shapes {' '.join(sh for _, sh in shapes)}): "
                              f"{alone * 1e3:.1f} ms of the {prof.run_median * 1e3:.1f} ms "
                              "shardc takes for the whole layer"))
    b.log(f"{kind}: " + ", ".join(f"{r.ratio:.2f}x {r.peer.split(':')[0]}" for r in results))
    return results


def mlp(b):
    return model_workload(b, "mlp", "two-layer MLP")


def attention(b):
    return model_workload(b, "attention", "attention block")


def transformer(b):
    return model_workload(b, "transformer", "transformer layer")
