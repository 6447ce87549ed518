"""The auto-shard quality workload of bench/run: for an MLP, an attention block
and a transformer layer, on 2 ranks and on a 2x2 mesh, the plan `shardc
--auto-shard` chooses is timed in the same rounds as the hand plans
(replicated, data parallel, Megatron, and the 2-D mixes), against the best of
them; under a memory budget that the replicated weights exceed, against the
best hand plan that fits (by its measured peak). The cost model's estimate of
every plan is read from `--report=auto-sharding` and its ranking compared with
the measured one (Spearman's rank correlation)."""
import os
import re

from . import auto_programs, npy
from .measure import BenchError, run
from .workloads import Result, in_rounds, median_profile

_ESTIMATE = re.compile(r"^  estimated time ([0-9.]+) us", re.M)
_PEAK = re.compile(r"^peak allocated bytes per rank:((?: \d+)+)", re.M)


def ranks_of(values):
    """1-based ranks, ties sharing their mean rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def spearman(xs, ys):
    """Spearman's rank correlation: Pearson's of the ranks (ties averaged)."""
    rx, ry = ranks_of(xs), ranks_of(ys)
    n = len(xs)
    mx, my = sum(rx) / n, sum(ry) / n
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    vx = sum((a - mx) ** 2 for a in rx)
    vy = sum((b - my) ** 2 for b in ry)
    return cov / (vx * vy) ** 0.5 if vx and vy else float("nan")


_MODELS = {}


def _cost_model(b, mesh, ranks):
    """The cost model file of `mesh`, measured once per run by shardc-calibrate
    on `ranks` ranks (--quick in smoke runs)."""
    key = tuple(mesh)
    if key not in _MODELS:
        text = "<[" + ", ".join(f'"{a}"={n}' for a, n in mesh) + "]>"
        path = os.path.join(b.work, "model_" + "x".join(str(n) for _, n in mesh) + ".json")
        calibrate = os.path.join(os.path.dirname(os.path.dirname(b.shardc)),
                                 "shardc-calibrate", "shardc-calibrate")
        out = run([b.mpiexec, "-n", str(ranks), calibrate, "--mesh", text, "-o", path]
                  + (["--quick"] if b.smoke else []), 600, with_stderr=True)
        # The figures that price every plan of the run, and any warning that
        # one of them was not believed (the machine was busy).
        for line in out.splitlines():
            if "among busy ranks" in line or "warning" in line:
                b.log(f"calibration {text}: {line}")
        _MODELS[key] = path
    return _MODELS[key]


def _estimate(b, shd, model, auto=False):
    """The cost model's estimated time of `shd` (seconds). A hand plan is
    first closed by propagation (--emit=sharded), so that the solver, which
    keeps written shardings, prices exactly the plan that is run."""
    if not auto:
        sharded = shd[:-4] + ".sharded.shd"
        run([b.shardc, shd, "--emit=sharded", "-o", sharded], 600)
        shd = sharded
    report = run([b.shardc, shd, "--auto-shard", "--report=auto-sharding",
                  "--cost-model", model], 600)
    match = _ESTIMATE.search(report)
    if not match:
        raise BenchError(f"no estimated time in the report of {shd}:\n{report[-500:]}")
    return float(match.group(1)) * 1e-6


def _inputs(b, index, source):
    """--input options for the parameters of `source`, as a freshly
    initialized model has them (auto_programs.init_range), written once per
    case: every plan runs on the same values."""
    d = os.path.join(b.work, f"auto_q{index}.inputs")
    os.makedirs(d, exist_ok=True)
    options = []
    for seed, (name, shape) in enumerate(auto_programs.parameters(source)):
        path = os.path.join(d, name + ".npy")
        low, high = auto_programs.init_range(name, shape)
        npy.write_uniform(path, shape, low, high, seed)
        options += ["--input", f"{name}={path}"]
    return options


def _peak(profile):
    """The largest measured peak of allocated bytes over the ranks."""
    match = _PEAK.search(profile.text)
    if not match:
        raise BenchError("no 'peak allocated bytes per rank' line in the profile")
    return max(int(n) for n in match.group(1).split())


def _cases(c):
    """(label, mesh, ranks, program of a plan) for every case in the config."""
    out = []
    for mesh in c["meshes"]:
        axes = tuple(a for a, _ in mesh)
        ranks = 1
        for _, n in mesh:
            ranks *= n
        shape = "x".join(str(n) for _, n in mesh)
        m = c["mlp"]
        out.append((f"MLP batch {m['batch']}, model {m['model']}, hidden {m['hidden']}, "
                    f"mesh {shape}", mesh, ranks, axes,
                    lambda plan, mesh=mesh: auto_programs.mlp(mesh, plan, **m)))
        a = c["attention"]
        out.append((f"attention batch {a['batch']}, seq {a['seq']}, {a['heads']} heads of "
                    f"{a['head_dim']}, mesh {shape}", mesh, ranks, axes,
                    lambda plan, mesh=mesh: auto_programs.attention(mesh, plan, **a)))
        t = c["transformer"]
        out.append((f"transformer layer batch {t['batch']}, seq {t['seq']}, {t['heads']} heads "
                    f"of {t['head_dim']}, hidden {t['hidden']}, mesh {shape}", mesh, ranks, axes,
                    lambda plan, mesh=mesh: auto_programs.transformer(mesh, plan, **t)))
    return out


_SMALLEST = re.compile(r"the smallest peak possible is (\d+) bytes")


def _budget_flags(model, budget):
    return ["--auto-shard", "--cost-model", model, f"--memory-budget={budget}"]


def _one_case(b, c, index, label, mesh, ranks, axes, program):
    """Builds, estimates and times every plan of one case; returns Results
    and (estimated, measured) pairs of its plans."""
    plans = auto_programs.hand_plans(axes)
    auto = auto_programs.Plan("auto", auto=True)
    source = program(auto)
    budget = auto_programs.weight_bytes(source)
    model = _cost_model(b, mesh, ranks)
    exes, estimates = {}, {}
    for plan in plans + [auto]:
        name = f"auto_q{index}_{plan.name.replace(' ', '_').replace('+', 'and')}"
        flags = ["--auto-shard", "--cost-model", model] if plan.auto else []
        exes[plan.name] = b.build(name, program(plan), flags)
        shd = os.path.join(b.work, name + ".shd")
        estimates[plan.name] = _estimate(b, shd, model, plan.auto)
        if b.smoke:
            b.check(exes[plan.name], ranks, name)
    budget_name = f"auto_q{index}_budget"
    budget_what = "the weights' bytes"
    try:
        exes["auto, budget"] = b.build(budget_name, source, _budget_flags(model, budget))
    except BenchError as e:
        # At --smoke sizes the activations outweigh the weights and no plan
        # fits in the weights' bytes: the smallest peak possible serves.
        smallest = _SMALLEST.search(str(e))
        if not b.smoke or not smallest:
            raise
        budget = int(smallest.group(1))
        budget_what = "the smallest peak possible"
        exes["auto, budget"] = b.build(budget_name, source, _budget_flags(model, budget))
    if b.smoke:
        b.check(exes["auto, budget"], ranks, budget_name)
    inputs = _inputs(b, index, source)
    got = in_rounds(c["rounds"], {name: (lambda exe=exe: b.profile_once(exe, ranks,
                                                                       c["repeats"], inputs))
                                  for name, exe in exes.items()})
    prof = {name: median_profile(profiles) for name, profiles in got.items()}
    peak = {name: max(_peak(p) for p in profiles) for name, profiles in got.items()}
    t = {name: p.run_median for name, p in prof.items()}
    hand = [p.name for p in plans]
    best = min(hand, key=lambda n: t[n])
    ms = lambda name: f"{t[name] * 1e3:.2f} ms ({prof[name].spread()})"
    names = hand + ["auto"]
    rho = spearman([estimates[n] for n in names], [t[n] for n in names])
    table = "; ".join(f"{n} {t[n] * 1e3:.2f} ms (est. {estimates[n] * 1e3:.2f} ms, peak "
                      f"{peak[n] / 1024:.0f} KiB)" for n in names)
    results = [Result("auto-shard quality", label, f"auto plan (calibrated): {ms('auto')}",
                      f"best hand plan ({best}): {ms(best)}", t["auto"] / t[best], 1.05,
                      at_least=False, note=f"Spearman {rho:.2f} (estimated vs measured, "
                      f"{len(names)} plans); {table}", profile=prof["auto"])]
    b.log(f"auto-shard quality {label}: {results[-1].ratio:.2f}x {best}; Spearman {rho:.2f}; "
          + table)
    fits = [n for n in hand if peak[n] <= budget]
    if fits:
        best_fit = min(fits, key=lambda n: t[n])
        over = "" if peak["auto, budget"] <= budget else " (OVER the budget)"
        results.append(Result(
            "auto-shard quality", f"{label}, --memory-budget={budget} ({budget_what})",
            f"auto plan (calibrated): {ms('auto, budget')}, "
            f"peak {peak['auto, budget'] / 1024:.0f} KiB{over}",
            f"best hand plan that fits ({best_fit}): {ms(best_fit)}",
            t["auto, budget"] / t[best_fit] if not over else float("inf"), 1.05,
            at_least=False, note="hand plans within the budget: " + ", ".join(fits),
            profile=prof["auto, budget"]))
        b.log(f"auto-shard quality {label} under {budget} bytes: {results[-1].ratio:.2f}x "
              f"{best_fit}; auto peak {peak['auto, budget']}")
    return results, [(estimates[n], t[n]) for n in names]


def quality(b):
    """The auto plan's measured time against the best hand plan's, per case,
    and the Spearman correlation of estimated and measured plan times."""
    c = b.config["auto-quality"]
    results, rhos = [], []
    for index, (label, mesh, ranks, axes, program) in enumerate(_cases(c)):
        got, pairs = _one_case(b, c, index, label, mesh, ranks, axes, program)
        results += got
        rhos.append(spearman([e for e, _ in pairs], [m for _, m in pairs]))
    valid = [r for r in rhos if r == r]
    mean = sum(valid) / len(valid) if valid else float("nan")
    results.append(Result("auto-shard ranking", "Spearman's rank correlation of the cost "
                          "model's estimates and the measured times, per case",
                          f"mean {mean:.2f}", "per case: " + ", ".join(f"{r:.2f}" for r in rhos),
                          mean, None))
    b.log(f"auto-shard ranking: Spearman per case {', '.join(f'{r:.2f}' for r in rhos)}; "
          f"mean {mean:.2f}")
    return results
