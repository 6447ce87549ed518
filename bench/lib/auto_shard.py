"""The auto-sharding workloads of bench/run: the solver's time on generated
transformer stacks (scripts/gen_transformer.py) against the issue's targets,
and the quality of its plan: an MLP without shardings built with
--auto-shard, timed in the same rounds as the hand plans (data parallel and
Megatron tensor parallel), against the best of them."""
import os
import re
import time

from .measure import run
from .workloads import Result, in_rounds, median_profile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _mlp(batch, model, hidden, ranks, plan):
    """The two-layer MLP of programs.mlp under `plan`: "auto" (no sharding),
    "data" (the batch split, weights replicated) or "megatron" (W1 by
    columns, W2 by rows)."""
    t = lambda *shape: "tensor<" + "x".join(map(str, shape)) + "xf32>"
    s = lambda dims: "" if plan == "auto" else f" sharding<@mesh, [{dims}]>"
    rows, rep2, rep1 = '{"x"}, {}', "{}, {}", "{}"
    if plan == "data":
        x, w1, b1, w2, out = rows, rep2, rep1, rep2, rows
    else:
        x, w1, b1, w2, out = rep2, '{}, {"x"}', '{"x"}', '{"x"}, {}', rep2
    return (f'@mesh = <["x"={ranks}]>\n\n'
            f"func @main(%x: {t(batch, model)}{s(x)},\n"
            f"           %w1: {t(model, hidden)}{s(w1)},\n"
            f"           %b1: {t(hidden)}{s(b1)},\n"
            f"           %w2: {t(hidden, model)}{s(w2)})\n"
            f"    -> {t(batch, model)}{s(out)} {{\n"
            "  %h = matmul %x, %w1\n"
            "  %hb = add %h, %b1\n"
            "  %a = relu %hb\n"
            "  %y = matmul %a, %w2\n"
            "  return %y\n}\n")


def scale(b):
    """Solve time, end to end through `shardc --auto-shard --emit=sharded`."""
    c = b.config["auto-scale"]
    results = []
    for ops, limit in c["ops"]:
        shd = os.path.join(b.work, f"transformer_{ops}.shd")
        with open(shd, "w") as f:
            f.write(run([os.path.join(ROOT, "scripts/gen_transformer.py"), "--ops", str(ops)],
                        60))
        times, report = [], ""
        for _ in range(c["repeats"]):
            start = time.perf_counter()
            run([b.shardc, shd, "--auto-shard", "--emit=sharded", "-o", os.devnull], 600)
            times.append(time.perf_counter() - start)
        report = run([b.shardc, shd, "--auto-shard", "--report=auto-sharding"], 600)
        model = next((line.strip() for line in report.splitlines()
                      if line.strip().startswith("model ")), "")
        reduced = next((line.strip() for line in report.splitlines()
                        if line.strip().startswith("reduced ")), "")
        best = sorted(times)[len(times) // 2]
        results.append(Result("auto-shard scale", f"transformer stack, {ops} ops, 2x2 mesh, "
                              "shardc --auto-shard --emit=sharded", f"{best:.2f} s",
                              f"the target: {limit} s", best / limit, 1.0, at_least=False,
                              note=f"{model}; {reduced}"))
        b.log(f"auto-shard scale {ops} ops: {best:.2f} s (target {limit} s)")
    return results


def quality(b):
    """The auto plan's measured time against the best hand plan's."""
    c = b.config["auto-quality"]
    ranks = c["ranks"]
    exes = {}
    for plan in ("auto", "data", "megatron"):
        name = f"auto_mlp_{plan}"
        flags = ["--auto-shard"] if plan == "auto" else []
        exes[plan] = b.build(name, _mlp(c["batch"], c["model"], c["hidden"], ranks, plan),
                             flags)
        if b.smoke:
            b.check(exes[plan], ranks, name)
    report = run([b.shardc, os.path.join(b.work, "auto_mlp_auto.shd"), "--auto-shard",
                  "--report=auto-sharding"], 600)
    chosen = "; ".join(re.findall(r"= matmul: .*?\[(i=[^\]]*)\]", report))
    got = in_rounds(c["rounds"], {plan: (lambda exe=exe: b.profile_once(exe, ranks,
                                                                        c["repeats"]))
                                  for plan, exe in exes.items()})
    prof = {plan: median_profile(profiles) for plan, profiles in got.items()}
    hand = min(("data", "megatron"), key=lambda plan: prof[plan].run_median)
    case = (f"MLP batch {c['batch']}, model {c['model']}, hidden {c['hidden']}, f32, "
            f"{ranks} ranks")
    ms = lambda p: f"{p.run_median * 1e3:.2f} ms ({p.spread()})"
    others = ", ".join(f"{plan} {prof[plan].run_median * 1e3:.2f} ms"
                       for plan in ("data", "megatron"))
    result = Result("auto-shard quality", case, f"auto plan: {ms(prof['auto'])}",
                    f"best hand plan ({hand}): {ms(prof[hand])}",
                    prof["auto"].run_median / prof[hand].run_median, 1.05, at_least=False,
                    note=f"the solver's matmuls: {chosen}; hand plans measured in the same "
                    f"rounds: {others}",
                    profile=prof["auto"])
    b.log(f"auto-shard quality: {result.ratio:.2f}x the best hand plan ({hand})")
    return [result]
