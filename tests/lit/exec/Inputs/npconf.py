#!/usr/bin/env python3
"""Runs .shd programs both ways and compares their results with numpy's.

numpy_conformance.py writes the programs (class Program); run() executes
each with `shardc --interpret`, with `--simulate` (the per-device program)
and as an executable under mpiexec, and
compares every result with numpy's value: integers, booleans and the IEEE
specials exactly, other floats within the tolerance the check gives.
"""
import os
import subprocess

import numpy as np

DTYPES = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64", np.dtype(np.int32): "i32",
          np.dtype(np.int64): "i64", np.dtype(np.bool_): "i1"}


def tensor_type(array):
    dims = "".join("%dx" % d for d in array.shape)
    return "tensor<%s%s>" % (dims, DTYPES[array.dtype])


class Program:
    """One .shd @main: inputs (global arrays with a sharding), statements,
    and results each with numpy's value and a tolerance (None = exact)."""

    def __init__(self, name, mesh='["x"=2, "y"=2]', ranks=4):
        self.name, self.mesh, self.ranks = name, mesh, ranks
        self.params, self.inputs, self.lines, self.results = [], {}, [], []
        self.fortran = set()

    def input(self, name, array, dims=None, fortran=False):
        """`dims`: the sharding's dims, e.g. '{"x"}, {}' (default: dim 0 on
        "x" and dim 1 on "y" where they divide). `fortran`: the file in
        Fortran order, as np.save writes an F-contiguous array."""
        if fortran:
            self.fortran.add(name)
        if dims is None:
            axes = ['"x"', '"y"']
            dims = ", ".join("{%s}" % axes[d] if d < 2 and n > 0 and n % 2 == 0 else "{}"
                             for d, n in enumerate(array.shape))
        self.params.append("%%%s: %s sharding<@mesh, [%s]>" % (name, tensor_type(array), dims))
        self.inputs[name] = array
        return "%" + name

    def let(self, name, statement):
        self.lines.append("  %%%s = %s" % (name, statement))
        return "%" + name

    def check(self, label, statement, expected, rtol=None, atol=0.0, signed_zeros=True):
        """`statement` computes the result ('{T}' is replaced by its type).
        rtol None: exact, and zeros' signs too unless `signed_zeros` is off."""
        expected = np.asarray(expected)
        name = "result%d" % len(self.results)
        self.lines.append("  %%%s = %s" % (name, statement.replace("{T}", tensor_type(expected))))
        self.results.append((label, name, expected, rtol, atol, signed_zeros))

    def text(self):
        types = ", ".join(tensor_type(r[2]) for r in self.results)
        body = "\n".join(self.lines)
        ret = ", ".join("%" + r[1] for r in self.results)
        return ("@mesh = <%s>\n\nfunc @main(%s)\n    -> (%s) {\n%s\n  return %s\n}\n" %
                (self.mesh, ",\n           ".join(self.params), types, body, ret))


def mismatch(got, expected, rtol, atol, signed_zeros):
    """None when `got` is numpy's `expected`, else what differs."""
    if got.dtype != expected.dtype or got.shape != expected.shape:
        return "got %s%s, expected %s%s" % (got.dtype, got.shape, expected.dtype, expected.shape)
    if expected.dtype.kind == "f":
        # NaN where numpy has NaN, the same infinities, finite values close.
        nan = np.isnan(expected)
        bad = nan != np.isnan(got)
        finite = np.isfinite(expected)
        bad |= ~nan & ~finite & (got != expected)
        if rtol is None:
            bad |= finite & (got != expected)
            if signed_zeros:
                bad |= finite & (np.signbit(got) != np.signbit(expected))
        else:
            bad |= finite & ~(np.abs(got.astype(np.float64) - expected) <=
                              atol + rtol * np.abs(expected.astype(np.float64)))
    else:
        bad = got != expected
    if not bad.any():
        return None
    where = np.argwhere(bad)[:3]
    return "; ".join("at %s got %r expected %r" % (tuple(i), got[tuple(i)].item(),
                                                    expected[tuple(i)].item()) for i in where)


def run(program, shardc, mpiexec, work):
    """Runs `program` both ways in work/NAME; returns the failures' lines."""
    directory = os.path.join(work, program.name)
    os.makedirs(directory, exist_ok=True)
    source = os.path.join(directory, "prog.shd")
    with open(source, "w") as f:
        f.write(program.text())
    args = []
    for name, array in program.inputs.items():
        path = os.path.join(directory, name + ".npy")
        np.save(path, np.asfortranarray(array) if name in program.fortran else array)
        args += ["--input", "%s=%s" % (name, path)]
    exe = os.path.join(directory, "prog")
    runs = {
        "interpret": [[shardc, source, "--interpret"] + args +
                      ["--output-dir", os.path.join(directory, "interpret")]],
        "simulate": [[shardc, source, "--simulate"] + args +
                     ["--output-dir", os.path.join(directory, "simulate")]],
        "executable": [[shardc, source, "-o", exe],
                       [mpiexec, "-n", str(program.ranks), exe] + args +
                       ["--output-dir", os.path.join(directory, "executable")]],
    }
    failures = []
    for how, commands in runs.items():
        for command in commands:
            done = subprocess.run(command, capture_output=True, text=True)
            if done.returncode != 0:
                failures.append("FAIL %s %s: exit %d: %s" % (program.name, how, done.returncode,
                                                             done.stderr.strip()[:400]))
                break
        else:
            for i, (label, _, expected, rtol, atol, zeros) in enumerate(program.results):
                got = np.load(os.path.join(directory, how, "result%d.npy" % i))
                problem = mismatch(got, expected, rtol, atol, zeros)
                if problem:
                    failures.append("FAIL %s %s %s: %s" % (program.name, how, label, problem))
    return failures
