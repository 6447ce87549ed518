"""Running things and reading their times: commands with a time limit, the
output formats of shardc executables and of the peers, and statistics."""
import os
import re
import statistics
import subprocess
import time


class BenchError(Exception):
    """A benchmark could not run (a build, a command or its output failed)."""


def run(cmd, timeout, env=None, cwd=None, with_stderr=False):
    """Runs `cmd`; returns its stdout (followed by its stderr when
    `with_stderr`). Raises BenchError with the command and its stderr when it
    fails or runs past `timeout` seconds."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                              env=full_env, cwd=cwd)
    except subprocess.TimeoutExpired:
        raise BenchError(f"timed out after {timeout} s: {' '.join(map(str, cmd))}")
    except OSError as e:
        raise BenchError(f"cannot run {cmd[0]}: {e}")
    if done.returncode != 0:
        raise BenchError(f"exit {done.returncode}: {' '.join(map(str, cmd))}\n"
                         + (done.stderr.strip() or done.stdout.strip())[-2000:])
    return done.stdout + done.stderr if with_stderr else done.stdout


def wall_times(cmd, repeats, timeout, env=None):
    """Seconds of wall time of each of `repeats` runs of `cmd`."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run(cmd, timeout, env)
        times.append(time.perf_counter() - start)
    return times


class Sample:
    """Times of one measured thing over several runs (seconds)."""

    def __init__(self, times):
        if not times:
            raise BenchError("no times were measured")
        self.times = sorted(times)

    @property
    def median(self):
        return statistics.median(self.times)

    @property
    def best(self):
        return self.times[0]

    @property
    def worst(self):
        return self.times[-1]

    def spread(self):
        """The range around the median, as percentages: `-1% +3%`."""
        return spread(self.best, self.median, self.worst)

    def __len__(self):
        return len(self.times)


def spread(best, median, worst):
    return f"-{100 * (median - best) / median:.0f}% +{100 * (worst - median) / median:.0f}%"


def peer_times(output):
    """The `time S` lines of a peer's output."""
    times = [float(m.group(1)) for m in re.finditer(r"^time ([0-9.eE+-]+)$", output, re.M)]
    if not times:
        raise BenchError(f"no 'time' lines in the peer's output:\n{output[-500:]}")
    return times


_RUNS = re.compile(r"^runs: (\d+) on (\d+) ranks, min ([0-9.]+) ms, median ([0-9.]+) ms, "
                   r"max ([0-9.]+) ms$", re.M)
_ROW = re.compile(r"^(.*?)\s+(\d+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+(\d+)$")


class Profile:
    """What a shardc executable prints with --repeat K --profile."""

    def __init__(self, output):
        match = _RUNS.search(output)
        if not match:
            raise BenchError(f"no 'runs:' line in the executable's output:\n{output[-500:]}")
        self.text = output[match.start():].rstrip()
        self.run_min, self.run_median, self.run_max = (
            float(match.group(i)) / 1e3 for i in (3, 4, 5))
        # An op of a slice chain (backend/llvm/SliceChain.cpp) is called once
        # per slice (an op in a loop once per iteration): its time per run is
        # its total over the runs' count. (Its median call times its calls
        # per run would leave out every call a busy machine preempted, which
        # a whole op's median run does not.)
        self.ops = {}          # op label -> median (or mean) seconds per run
        self.collectives = {}  # kind -> median seconds per call
        runs = int(match.group(1))
        table = None
        for line in output[match.end():].splitlines():
            if line.startswith("op ") and "calls" in line:
                table = self.ops
            elif line.startswith("collective ") and "calls" in line:
                table = self.collectives
            elif table is not None:
                row = _ROW.match(line)
                if row:
                    repeated = table is self.ops and int(row.group(2)) > runs
                    table[row.group(1).strip()] = (float(row.group(3)) / 1e3 / runs if repeated
                                                   else float(row.group(5)) / 1e6)

    def spread(self):
        """The spread of this invocation's runs around their median."""
        return spread(self.run_min, self.run_median, self.run_max)

    def breakdown(self):
        """Where a median run's time goes: each op's median, largest first."""
        run = self.run_median
        parts = [f"{name} {t * 1e3:.2f} ms ({100 * t / run:.0f}%)"
                 for name, t in sorted(self.ops.items(), key=lambda kv: -kv[1])]
        outside = run - self.op_seconds()
        parts.append(f"outside the ops (start of the run, result copies) {outside * 1e3:.2f} ms")
        return f"of the median run's {run * 1e3:.2f} ms: " + "; ".join(parts)

    def op_seconds(self):
        """The sum of every op's median time: the run without the copies into
        the output buffers and the start of the run."""
        return sum(self.ops.values())


_PHASE = re.compile(r"^  (\S.*?) +([0-9.]+) s", re.M)


def phase_times(stderr):
    """`shardc --time-passes`'s table: phase -> seconds (without the total)."""
    phases = {m.group(1): float(m.group(2)) for m in _PHASE.finditer(stderr)}
    phases.pop("total", None)
    if not phases:
        raise BenchError(f"no --time-passes table in shardc's output:\n{stderr[-500:]}")
    return phases


def run_stderr(cmd, timeout, env=None):
    """Runs `cmd` (with `env` added to the environment); returns its stderr
    (BenchError when it fails)."""
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                              env=dict(os.environ, **(env or {})))
    except subprocess.TimeoutExpired:
        raise BenchError(f"timed out after {timeout} s: {' '.join(map(str, cmd))}")
    if done.returncode != 0:
        raise BenchError(f"exit {done.returncode}: {' '.join(map(str, cmd))}\n{done.stderr[-2000:]}")
    return done.stderr


def package_version(name):
    """The installed version of Debian package `name`, or "not installed"."""
    done = subprocess.run(["dpkg-query", "-W", "-f=${Status} ${Version}", name],
                          capture_output=True, text=True)
    words = done.stdout.split()
    if done.returncode != 0 or words[:3] != ["install", "ok", "installed"] or len(words) < 4:
        return "not installed"
    return words[3]


def machine():
    """Lines describing the machine and the peers' versions."""
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    flags = ""
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read()
        flags = ", ".join(x for x in ("avx2", "avx512f", "fma") if f" {x} " in text)
    except OSError:
        pass
    return [
        f"CPU: {cpu} ({flags}), {os.cpu_count()} cores",
        f"Load average at start: {os.getloadavg()[0]:.2f}",
        f"OpenBLAS {package_version('libopenblas0-pthread')}, "
        f"ScaLAPACK {package_version('libscalapack-mpich2.2')}, "
        f"MPICH {package_version('mpich')}, LLVM {package_version('llvm-14')}, "
        f"PyTorch {package_version('python3-torch')}",
    ]
