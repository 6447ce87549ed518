"""The auto-shard scale workload of bench/run: the solver's time on generated
transformer stacks (scripts/gen_transformer.py) against the issue's targets,
without a memory budget and with one that the replicated weights exceed (half
the peak of the plan chosen without a budget). The quality workload is in
auto_quality.py."""
import os
import re
import time

from .measure import BenchError, run
from .workloads import Result

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_PEAK = re.compile(r"^  peak memory per device (\d+) bytes", re.M)


def _line(report, start):
    return next((line.strip() for line in report.splitlines()
                 if line.strip().startswith(start)), "")


def scale(b):
    """Solve time, end to end through `shardc --auto-shard --emit=sharded`."""
    c = b.config["auto-scale"]
    results = []
    for ops, limit in c["ops"]:
        shd = os.path.join(b.work, f"transformer_{ops}.shd")
        with open(shd, "w") as f:
            f.write(run([os.path.join(ROOT, "scripts/gen_transformer.py"), "--ops", str(ops)],
                        60))
        free = run([b.shardc, shd, "--auto-shard", "--report=auto-sharding"], 600)
        peak = _PEAK.search(free)
        if not peak:
            raise BenchError(f"no peak memory in the report of {shd}")
        budget = int(peak.group(1)) // 2
        limit_flags = ([f"--solver-time-limit={c['solver_time_limit']}"]
                       if "solver_time_limit" in c else [])
        for flags in ([], [f"--memory-budget={budget}"] + limit_flags):
            times = []
            for _ in range(c["repeats"]):
                start = time.perf_counter()
                run([b.shardc, shd, "--auto-shard", "--emit=sharded", "-o", os.devnull] + flags,
                    600)
                times.append(time.perf_counter() - start)
            report = run([b.shardc, shd, "--auto-shard", "--report=auto-sharding"] + flags, 600)
            median = sorted(times)[len(times) // 2]
            what = (f", {flags[0]} (half the unbudgeted peak)" if flags else "") + "".join(
                f", {flag}" for flag in flags[1:])
            how = _line(report, "how: ")  # when the plan is not CBC's alone
            results.append(Result(
                "auto-shard scale", f"transformer stack, {ops} ops, 2x2 mesh{what}, "
                "shardc --auto-shard --emit=sharded", f"{median:.2f} s", f"the target: {limit} s",
                median / limit, 1.0, at_least=False,
                note=f"runs {', '.join(f'{t:.2f}' for t in times)} s; "
                f"{_line(report, 'status ')}; {how + '; ' if how else ''}"
                f"{_line(report, 'peak memory')}; "
                f"{_line(report, 'model ')}; {_line(report, 'reduced ')}"))
            b.log(f"auto-shard scale {ops} ops{what}: {median:.2f} s (target {limit} s)")
    return results
