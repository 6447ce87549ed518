"""The workloads of bench/run: each builds its shardc programs, runs them and
their peers in the same run, and returns Results (a ratio and its target)."""
import os
import re
import shutil
import sys

from . import programs
from .measure import (BenchError, Profile, Sample, peer_times, phase_times, run, run_stderr,
                      wall_times)


class Result:
    """One line of RESULTS.md: shardc's figure, the peer's, their ratio
    (larger is better for ">=" targets, smaller for "<="; None: no ratio) and
    the target (None: a figure reported without one)."""

    def __init__(self, workload, case, shardc, peer, ratio, target, at_least=True, note="",
                 profile=None):
        self.workload, self.case, self.shardc, self.peer = workload, case, shardc, peer
        self.ratio, self.target, self.at_least = ratio, target, at_least
        self.note, self.profile = note, profile

    @property
    def met(self):
        if self.target is None:  # a figure reported without a target
            return True
        return self.ratio >= self.target if self.at_least else self.ratio <= self.target

    def target_text(self):
        if self.target is None:
            return "none"
        return f"{'>=' if self.at_least else '<='} {self.target:g}"


def median_profile(profiles):
    """The profile of the invocation with the median run time (its figures
    are consistent with each other, which medians of each figure would not be)."""
    return sorted(profiles, key=lambda p: p.run_median)[len(profiles) // 2]


def in_rounds(rounds, measures):
    """Runs every measure (name -> function of no arguments) once per round,
    in turn, and returns name -> the list of what each call returned. The
    machine's speed drifts (another tenant, a change of clock: up to 2x here),
    and taking turns lets a slow spell land on shardc and its peers alike."""
    out = {name: [] for name in measures}
    for _ in range(rounds):
        for name, measure in measures.items():
            out[name].append(measure())
    return out


class Bench:
    """Paths, sizes and the helpers every workload uses."""

    def __init__(self, build, work, config, smoke, log):
        self.shardc = os.path.join(build, "tools/shardc/shardc")
        self.compare = os.path.join(build, "tools/shardc-npy-compare/shardc-npy-compare")
        self.peers = os.path.join(build, "bench")
        self.mpiexec = "mpiexec.mpich"
        self.work, self.config, self.smoke, self.log = work, config, smoke, log
        self.unchecked = {}  # check()'s executables not yet run: exe -> (name, ranks)

    def peer(self, name):
        path = os.path.join(self.peers, name)
        if not os.access(path, os.X_OK):
            raise BenchError(f"peer {path} is not built")
        return path

    def build(self, name, source, flags=()):
        """Writes `source` as NAME.shd and compiles it (with `flags`); returns
        the executable."""
        shd = os.path.join(self.work, name + ".shd")
        exe = os.path.join(self.work, name)
        with open(shd, "w") as f:
            f.write(source)
        run([self.shardc, shd, "-o", exe] + list(flags), timeout=600)
        return exe

    def profile_once(self, exe, ranks, repeats, inputs=None):
        """The executable's --profile on `inputs` (--input options; random
        values when there are none). The first profiled run of an executable
        that check() named also writes its results and compares them."""
        args = inputs or ["--random-inputs", "1"]
        name, _ = self.unchecked.pop(exe, (None, None))
        outputs = ["--output-dir", self._fresh(name + ".exe")] if name else []
        profile = Profile(run([self.mpiexec, "-n", str(ranks), exe] + args
                              + ["--repeat", str(repeats), "--profile"] + outputs, timeout=1200))
        if name:
            self._compare_with_interpreter(name, args)
        return profile

    def check(self, exe, ranks, name):
        """Smoke runs only: the executable's results equal the interpreter's,
        compared at its first profiled run (one launch less: the smoke's time
        goes to MPI starting its ranks), or by finish_checks()."""
        self.unchecked[exe] = (name, ranks)

    def finish_checks(self):
        """Checks, by a run of their own, the executables named to check()
        that were not profiled (a workload that failed before it timed them)."""
        while self.unchecked:
            exe, (name, ranks) = self.unchecked.popitem()
            args = ["--random-inputs", "1"]
            run([self.mpiexec, "-n", str(ranks), exe] + args
                + ["--output-dir", self._fresh(name + ".exe")], 300)
            self._compare_with_interpreter(name, args)

    def _fresh(self, leaf):
        """WORK/LEAF, emptied: results of an earlier run must not pass for new ones."""
        path = os.path.join(self.work, leaf)
        shutil.rmtree(path, ignore_errors=True)
        return path

    def _compare_with_interpreter(self, name, args):
        shd = os.path.join(self.work, name + ".shd")
        got, want = os.path.join(self.work, name + ".exe"), self._fresh(name + ".ref")
        run([self.shardc, shd, "--interpret"] + args + ["--output-dir", want], 300)
        run([self.compare, got, want, "--rtol", "1e-4", "--atol", "1e-4"], 60)

    def peer_sample(self, cmd, ranks=None, env=None, timeout=1200):
        if ranks is not None:
            cmd = [self.mpiexec, "-n", str(ranks)] + cmd
        return Sample(peer_times(run(cmd, timeout, env)))


ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1"}


def gemm(b):
    c = b.config["matmul"]
    ranks, results = c["ranks"], []
    for n in c["sizes"]:
        for dtype in ("f32", "f64"):
            name = f"matmul_{n}_{dtype}"
            exe = b.build(name, programs.matmul(n, dtype, ranks))
            if b.smoke:
                b.check(exe, ranks, name)
            repeats = c["repeats"]
            measures = {
                "shardc": lambda: b.profile_once(exe, ranks, repeats),
                "blas": lambda: b.peer_sample([b.peer("bench-blas-gemm"), dtype, str(n),
                                               str(ranks), str(repeats)]).times,
            }
            for nb in c["block_sizes"]:
                measures[nb] = (lambda nb=nb: b.peer_sample(
                    [b.peer("bench-scalapack-gemm"), dtype, str(n), str(nb), str(repeats)],
                    ranks, ONE_THREAD).times)
            got = in_rounds(c["rounds"], measures)
            prof = median_profile(got["shardc"])
            flops = 2.0 * n ** 3
            blas = Sample(sum(got["blas"], []))
            scalapack = {nb: Sample(sum(got[nb], [])) for nb in c["block_sizes"]}
            best_nb = min(scalapack, key=lambda nb: scalapack[nb].median)
            scalapack = scalapack[best_nb]
            gf = lambda seconds: flops / seconds / 1e9
            case = f"N={n} {dtype}, {ranks} ranks"
            ours_text = f"{gf(prof.run_median):.1f} GFLOP/s ({prof.spread()})"
            results.append(Result("matmul", case, ours_text,
                                  f"OpenBLAS {ranks} threads: {gf(blas.median):.1f} GFLOP/s "
                                  f"({blas.spread()})",
                                  blas.median / prof.run_median, 0.9, profile=prof))
            results.append(Result("matmul", case, ours_text,
                                  f"ScaLAPACK {'pdgemm' if dtype == 'f64' else 'psgemm'} NB={best_nb}: "
                                  f"{gf(scalapack.median):.1f} GFLOP/s ({scalapack.spread()})",
                                  scalapack.median / prof.run_median, 1.3, profile=prof))
            b.log(f"matmul {case}: {results[-2].ratio:.2f}x OpenBLAS, "
                  f"{results[-1].ratio:.2f}x ScaLAPACK")
    return results


def elementwise(b):
    c = b.config["elementwise"]
    ranks, n = c["ranks"], c["per_rank"]
    fused = b.build("elementwise_fused", programs.elementwise(n, ranks, True))
    unfused = b.build("elementwise_unfused", programs.elementwise(n, ranks, False))
    if b.smoke:
        b.check(fused, ranks, "elementwise_fused")
        b.check(unfused, ranks, "elementwise_unfused")
    repeats = c["repeats"]
    got = in_rounds(c["rounds"], {
        "fused": lambda: b.profile_once(fused, ranks, repeats),
        "unfused": lambda: b.profile_once(unfused, ranks, repeats),
        "triad": lambda: b.peer_sample([b.peer("bench-triad"), str(n), str(repeats)],
                                       ranks).times,
    })
    pf, pu = median_profile(got["fused"]), median_profile(got["unfused"])
    triad = Sample(sum(got["triad"], []))
    # Bytes as STREAM counts them: each array read or written once.
    ours_bw = 4 * 4 * n / pf.op_seconds() / 1e9
    triad_bw = 3 * 4 * n / triad.median / 1e9
    case = f"tanh(a*b+c), {n} f32 per rank, {ranks} ranks"
    note = (f"whole run {pf.run_median * 1e3:.2f} ms, of which the op "
            f"{pf.op_seconds() * 1e3:.2f} ms")
    results = [
        Result("fused elementwise", case, f"{ours_bw:.2f} GB/s per rank",
               f"STREAM triad: {triad_bw:.2f} GB/s per rank ({triad.spread()})",
               ours_bw / triad_bw, 0.8, note=note, profile=pf),
        Result("fused elementwise", case + ", fused vs op by op",
               f"{pf.op_seconds() * 1e3:.2f} ms", f"unfused: {pu.op_seconds() * 1e3:.2f} ms",
               pu.op_seconds() / pf.op_seconds(), 2.0, profile=pu),
    ]
    b.log(f"elementwise: {results[0].ratio:.2f}x triad, {results[1].ratio:.2f}x unfused")
    return results


def _triad_bandwidth(triad_times, n):
    """The STREAM triad's bytes per second per rank (3 arrays of n f32)."""
    triad = Sample(sum(triad_times, []))
    return 3 * 4 * n / triad.median, triad


def softmax(b):
    """Softmax over the last dim (issue 22): one read of the input and one
    write of the output per rank, against the STREAM triad's bandwidth."""
    c = b.config["softmax"]
    ranks, heads, rows, cols = c["ranks"], c["heads"], c["rows"], c["cols"]
    exe = b.build("softmax", programs.softmax(heads, rows, cols, ranks))
    if b.smoke:
        b.check(exe, ranks, "softmax")
    n = heads * rows * cols // ranks
    got = in_rounds(c["rounds"], {
        "shardc": lambda: b.profile_once(exe, ranks, c["repeats"]),
        "triad": lambda: b.peer_sample([b.peer("bench-triad"), str(n), str(c["repeats"])],
                                       ranks).times,
    })
    prof = median_profile(got["shardc"])
    triad_bw, triad = _triad_bandwidth(got["triad"], n)
    ours_bw = 2 * 4 * n / prof.op_seconds()
    case = f"{heads}x{rows}x{cols} f32 over the last dim, heads split, {ranks} ranks"
    result = Result("softmax", case,
                    f"{ours_bw / 1e9:.2f} GB/s per rank ({prof.op_seconds() * 1e3:.2f} ms)",
                    f"STREAM triad: {triad_bw / 1e9:.2f} GB/s per rank ({triad.spread()})",
                    ours_bw / triad_bw, 0.8, profile=prof,
                    note="bytes counted: one read of the input and one write of the output")
    b.log(f"softmax: {result.ratio:.2f}x triad")
    return [result]


def broadcast(b):
    """exp(s - m) with m a broadcast, a row vector or a transposed operand:
    the fused loop against the STREAM triad (bytes: s read, the result
    written, and m read once)."""
    c = b.config["broadcast"]
    ranks, heads, rows, cols = c["ranks"], c["heads"], c["rows"], c["cols"]
    n = heads * rows * cols // ranks
    operand_elements = {"rows": n // cols, "columns": cols, "transposed": n}
    exes = {}
    for operand in operand_elements:
        name = f"broadcast_{operand}"
        exes[operand] = b.build(name, programs.broadcast_chain(heads, rows, cols, ranks, operand))
        if b.smoke:
            b.check(exes[operand], ranks, name)
    measures = {operand: (lambda exe=exe: b.profile_once(exe, ranks, c["repeats"]))
                for operand, exe in exes.items()}
    measures["triad"] = lambda: b.peer_sample(
        [b.peer("bench-triad"), str(n), str(c["repeats"])], ranks).times
    got = in_rounds(c["rounds"], measures)
    triad_bw, triad = _triad_bandwidth(got["triad"], n)
    results = []
    for operand, extra in operand_elements.items():
        prof = median_profile(got[operand])
        ours_bw = 4 * (2 * n + extra) / prof.op_seconds()
        case = f"exp(s - m), s {heads}x{rows}x{cols} f32 heads split, m: {operand}, {ranks} ranks"
        results.append(Result("broadcast operand", case,
                              f"{ours_bw / 1e9:.2f} GB/s per rank "
                              f"({prof.op_seconds() * 1e3:.2f} ms)",
                              f"STREAM triad: {triad_bw / 1e9:.2f} GB/s per rank "
                              f"({triad.spread()})", ours_bw / triad_bw, 0.8, profile=prof))
        b.log(f"broadcast {operand}: {results[-1].ratio:.2f}x triad")
    return results


def collectives(b, key="reshard"):
    """Each reshard kind's collective against the MPI call on the same bytes,
    on the ranks and sizes of config `key`."""
    c = b.config[key]
    ranks, results = c["ranks"], []
    for mib in c["sizes_mib"]:
        nbytes = int(mib * (1 << 20))
        repeats = c["repeats"] if mib < 16 else max(3, c["repeats"] // 4)
        for kind in programs.COLLECTIVE_KINDS:
            name = f"{kind}_{nbytes}_{ranks}"
            exe = b.build(name, programs.collective(kind, nbytes // 4, ranks))
            if b.smoke:
                b.check(exe, ranks, name)
            # The blocks of an all_to_all split along dim 1 are strided:
            # MPI_Alltoall on contiguous blocks skips a pass that the reshard
            # needs, so it is also measured against that pass written by hand.
            peer_kinds = [kind] + (["all_to_all_by_hand"] if kind == "all_to_all" else [])
            measures = {"shardc": lambda: b.profile_once(exe, ranks, repeats)}
            for k in peer_kinds:
                measures[k] = (lambda k=k: b.peer_sample(
                    [b.peer("bench-mpi-collectives"), k, str(nbytes), str(repeats)],
                    ranks).times)
            got = in_rounds(c["rounds"], measures)
            prof = median_profile(got["shardc"])
            peer_runs = {k: sum(got[k], []) for k in peer_kinds}
            if kind not in prof.collectives:
                raise BenchError(f"{name}: the profile has no {kind} row:\n{prof.text}")
            ours = prof.collectives[kind]
            ours_text = f"{ours * 1e3:.3f} ms ({prof.spread()})"
            raw = Sample(peer_runs[kind])
            size = f"{mib:g} MiB" if mib >= 1 else f"{nbytes // 1024} KiB"
            cores = os.cpu_count() or ranks
            where = f"{ranks} ranks" + (f" on {cores} cores" if ranks > cores else "")
            results.append(Result("reshard", f"{kind}, {size} per device, {where}",
                                  ours_text, f"MPI: {raw.median * 1e3:.3f} ms ({raw.spread()})",
                                  raw.median / ours, 0.9, profile=prof))
            if kind == "all_to_all":
                hand = Sample(peer_runs["all_to_all_by_hand"])
                results.append(Result("reshard", results[-1].case + ", against the reshard "
                                      "by hand (pack, then MPI_Alltoall)", ours_text,
                                      f"MPI by hand: {hand.median * 1e3:.3f} ms "
                                      f"({hand.spread()})", hand.median / ours, 0.9))
            b.log(f"{kind} {size}: {results[-1].ratio:.2f}x MPI")
    return results


def collectives_oversubscribed(b):
    """The collectives at 8 ranks on however many cores the machine has
    (issue 22): what a laptop user sees first. Ranks wait for a core, on
    shardc's side and MPI's alike."""
    results = collectives(b, "reshard-8")
    if results and b.config["reshard-8"]["ranks"] > (os.cpu_count() or 1):
        results[0].note = ("more ranks than cores: MPICH's blocking calls (the peer) spin "
                           "while they wait, and a waiting rank holds a core that a rank "
                           "with work needs; shardc's runtime polls with MPI_Testall and "
                           "gives the core up between polls (sched_yield)")
    return results


def _generated(b, ops):
    path = os.path.join(b.work, f"generated_{ops}.shd")
    gen = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "gen_large_program.py")
    with open(path, "w") as f:
        f.write(run([sys.executable, gen, "--ops", str(ops)], 300))
    return path


# The phases of `--time-passes` that are not the passes themselves.
_NOT_PASSES = ("parse", "print")


def compile_time(b):
    c = b.config["compile"]
    shds = {ops: _generated(b, ops) for ops in c["ops"]}
    # The passes: type inference and verification, propagation, export,
    # partitioning, as --time-passes times them (parse and print apart). The
    # sizes take turns, so that a slow spell falls on every size alike.
    runs = in_rounds(c["repeats"], {
        ops: (lambda shd=shd: phase_times(run_stderr(
            [b.shardc, shd, "--emit=spmd", "-o", os.devnull, "--time-passes"], 600)))
        for ops, shd in shds.items()})
    passes = {ops: [sum(t for name, t in r.items() if name not in _NOT_PASSES) for r in rs]
              for ops, rs in runs.items()}
    parse = {ops: Sample([r["parse"] for r in rs]) for ops, rs in runs.items()}
    builds = {}
    for ops in c["build_ops"]:
        builds[ops] = Sample(wall_times([b.shardc, shds[ops], "-o", shds[ops][:-4]], 1, 1200))
    for ops in c["ops"]:
        b.log(f"compile {ops} ops: passes {Sample(passes[ops]).median:.2f} s, "
              f"parse {parse[ops].median:.2f} s")
    results = []
    big, prev = c["ops"][-1], c["ops"][-2]
    big_passes, prev_passes = Sample(passes[big]), Sample(passes[prev])
    # The growth of each round (the two sizes run back to back), then their median.
    growth = Sample([x / y for x, y in zip(passes[big], passes[prev])])
    results.append(Result("compile time", f"{big} ops: verify, propagate, partition",
                          f"{big_passes.median:.2f} s ({big_passes.spread()})",
                          "the target", big_passes.median, c["limit_seconds"], at_least=False,
                          note=f"parsing the {big} ops takes {parse[big].median:.2f} s more"))
    results.append(Result("compile time", f"growth of the passes {prev} -> {big} ops, "
                          "median of the rounds",
                          f"{prev} ops {prev_passes.median:.3f} s, {big} ops "
                          f"{big_passes.median:.3f} s", f"linear: {big / prev:g}x",
                          growth.median, c["max_growth"], at_least=False))
    for ops, build in builds.items():
        results.append(Result("compile time", f"{ops} ops: full build to an executable",
                              f"{build.median:.2f} s", "(LLVM O3, code generation, link)",
                              None, None))
    return results


def _layers(b, ops, distinct):
    """scripts/gen_layers.py's program of `ops` ops: one layer repeated, or
    every layer of its own shapes."""
    name = f"layers_{'distinct' if distinct else 'repeated'}_{ops}"
    path = os.path.join(b.work, name + ".shd")
    gen = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "gen_layers.py")
    with open(path, "w") as f:
        f.write(run([sys.executable, gen, "--ops", str(ops)]
                    + (["--distinct"] if distinct else []), 300))
    return path


def kernel_compile(b):
    """Seconds from .shd to executable, where the backend compiles each
    distinct kernel once and keeps it in the kernel cache: repeated layers
    with an empty cache (cold) and with the cache the cold build filled
    (warm), all-distinct layers without the cache; and the whole front half
    (parse included) of the 100,000-op generated program to --emit=spmd."""
    c = b.config["kernels"]
    ops = c["ops"]
    repeated, distinct = _layers(b, ops, False), _layers(b, ops, True)
    exe = os.path.join(b.work, "layers")
    cache = os.path.join(b.work, "kernel-cache")

    def cold():
        shutil.rmtree(cache, ignore_errors=True)
        return wall_times([b.shardc, repeated, "-o", exe], 1, 1200, {"SHARDC_CACHE_DIR": cache})[0]

    def warm():  # the cache as the cold build before it left it
        return wall_times([b.shardc, repeated, "-o", exe], 1, 1200, {"SHARDC_CACHE_DIR": cache})[0]

    runs = in_rounds(c["repeats"], {"cold": cold, "warm": warm})
    distinct_times = Sample(wall_times([b.shardc, distinct, "-o", exe, "--no-cache"],
                                       c["distinct_repeats"], 1800))
    front = _generated(b, c["front_ops"])
    front_times = Sample(wall_times([b.shardc, front, "--emit=spmd", "-o", os.devnull],
                                    c["repeats"], 600))
    # Peak resident memory, from --time-passes (each phase's line ends with
    # the peak at its end): every page of it is one the kernel zeroed first.
    phases = re.findall(r"^  (\S+) .* ([0-9.]+) MiB$",
                        run_stderr([b.shardc, front, "--emit=spmd", "-o", os.devnull,
                                    "--time-passes"], 600), re.M)
    front_note = (f"peak resident memory {max(float(m) for _, m in phases):.0f} MiB, "
                  f"{next(float(m) for p, m in phases if p == 'parse'):.0f} MiB at the end of "
                  "the parse" if phases else "")
    # What the backend did, cold then warm: `shardc: kernels: ...` of --time-passes.
    shutil.rmtree(cache, ignore_errors=True)
    notes = {}
    for name in ("cold", "warm"):
        stderr = run_stderr([b.shardc, repeated, "-o", exe, "--time-passes"], 1200,
                            {"SHARDC_CACHE_DIR": cache})
        notes[name] = next((line.replace("shardc: ", "") for line in stderr.splitlines()
                            if line.startswith("shardc: kernels:")), "")
    results = []
    for name, target in (("cold", c["cold_seconds"]), ("warm", c["warm_seconds"])):
        sample = Sample(runs[name])
        results.append(Result("kernel compile", f"{ops} ops of repeated layers to an executable, "
                              f"{name} kernel cache", f"{sample.median:.2f} s ({sample.spread()})",
                              "the target", sample.median, target, at_least=False,
                              note=notes[name]))
    results.append(Result("kernel compile", f"{ops} ops of all-distinct layers to an executable, "
                          "--no-cache", f"{distinct_times.median:.2f} s "
                          f"({distinct_times.spread()})", "the target", distinct_times.median,
                          c["distinct_seconds"], at_least=False))
    results.append(Result("kernel compile", f"{c['front_ops']} ops to --emit=spmd, parse included",
                          f"{front_times.median:.2f} s ({front_times.spread()})", "the target",
                          front_times.median, c["front_seconds"], at_least=False,
                          note=front_note))
    for r in results:
        b.log(f"{r.case}: {r.shardc}")
    return results


def startup(b):
    c = b.config["startup"]
    ranks = c["ranks"]
    exe = b.build("trivial", programs.trivial(ranks))
    mpi = [b.mpiexec, "-n", str(ranks)]
    commands = {"shardc": mpi + [exe, "--random-inputs", "1"], "true": mpi + ["true"],
                "mpi": mpi + [b.peer("bench-mpi-hello")]}
    def timed(name):
        # mpiexec races a program that never joins MPI (`true`): once in a
        # while hydra's proxy writes to the connection `true` closed and dies
        # of SIGPIPE (exit -13). That is the peer's flake, not a time of
        # ours: run it again.
        for attempt in range(3):
            try:
                return wall_times(commands[name], 1, 120)
            except BenchError as e:
                if name != "true" or attempt == 2 or not str(e).startswith("exit -13"):
                    raise

    times = in_rounds(c["repeats"], {name: (lambda name=name: timed(name)) for name in commands})
    ours, true, mpi_only = (Sample(sum(times[n], [])) for n in ("shardc", "true", "mpi"))
    case = f"trivial program under mpiexec -n {ranks}"
    ours_text = f"{ours.median * 1e3:.0f} ms ({ours.spread()})"
    results = [
        Result("start-up", case, ours_text,
               f"mpiexec -n {ranks} true: {true.median * 1e3:.0f} ms ({true.spread()})",
               ours.median / true.median, 1.2, at_least=False,
               note=f"MPI_Init + MPI_Finalize alone take {mpi_only.median * 1e3:.0f} ms here"),
        Result("start-up", case + ", against an MPI program that only starts and stops",
               ours_text, f"MPI_Init + MPI_Finalize: {mpi_only.median * 1e3:.0f} ms "
               f"({mpi_only.spread()})", ours.median / mpi_only.median, 1.2, at_least=False),
    ]
    b.log(f"start-up: {results[0].ratio:.2f}x true, {results[1].ratio:.2f}x MPI start and stop")
    return results


def loop(b):
    """A `for` loop against the same body unrolled (issue 18): the loop adds
    no per-iteration cost beyond its body."""
    c = b.config["loop"]
    ranks, n, model, iters = c["ranks"], c["rows"], c["model"], c["iterations"]
    looped = b.build("loop_for", programs.loop_layer(n, model, iters, ranks, False))
    unrolled = b.build("loop_unrolled", programs.loop_layer(n, model, iters, ranks, True))
    if b.smoke:
        b.check(looped, ranks, "loop_for")
        b.check(unrolled, ranks, "loop_unrolled")
    got = in_rounds(c["rounds"], {
        "loop": lambda: b.profile_once(looped, ranks, c["repeats"]),
        "unrolled": lambda: b.profile_once(unrolled, ranks, c["repeats"]),
    })
    pl, pu = median_profile(got["loop"]), median_profile(got["unrolled"])
    case = (f"{iters} x tanh(0.5 h W), h {n}x{model} split by rows, f32, {ranks} ranks")
    result = Result("for loop vs unrolled", case,
                    f"{pl.run_median * 1e3:.1f} ms ({pl.spread()})",
                    f"unrolled: {pu.run_median * 1e3:.1f} ms ({pu.spread()})",
                    pu.run_median / pl.run_median, 0.95, profile=pl)
    b.log(f"loop: {result.ratio:.2f}x unrolled")
    return [result]


WORKLOADS = {
    "matmul": gemm,
    "elementwise": elementwise,
    "softmax": softmax,
    "broadcast": broadcast,
    "reshard": collectives,
    "reshard-8": collectives_oversubscribed,
    "compile": compile_time,
    "kernels": kernel_compile,
    "startup": startup,
    "loop": loop,
}
