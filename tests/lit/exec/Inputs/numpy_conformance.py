#!/usr/bin/env python3
"""numpy conformance of every op's values (LANGUAGE.md section 5).

Each op of section 5 on every element type it accepts, with the edge cases
numpy defines (NaN and infinities, -0.0, half-way rounding, integer wrap,
empty and rank-0 tensors, size-1 broadcasting), run by `shardc --interpret`,
`--simulate` and as an executable (a 2x2 mesh on 4 ranks with the dims split,
4 shards of dims they do not divide, 2 ranks), each compared with
what numpy computes for the same program (npconf.py runs and compares;
npconf_elementwise.py and npconf_structure.py hold the programs,
npconf_values.py the values). Where numpy defines no
value the expected one is shardc's documented rule (docs/language.md,
"Values of the ops"), written here from the rule:
  - integer `div` truncates toward zero (ONNX Div: onnx/onnx's
    onnx/reference/ops/op_div.py; StableHLO divide; numpy's `//` floors),
    x / 0 = 0 (numpy's `//` gives 0 too), INT_MIN / -1 wraps;
  - integer `pow` with a negative exponent is the truncated exact value
    (1 for base 1, +-1 for base -1, 0 otherwise; numpy raises; PyTorch's
    powi in aten/src/ATen/native/Pow.h);
  - float -> integer conversion of NaN, infinities and values out of range
    gives the type's minimum (numpy's astype on x86, with a warning);
  - integer reduce_mean truncates; max/min of nothing are -inf/+inf.

usage: numpy_conformance.py SHARDC MPIEXEC WORKDIR
"""
import os
import sys
import warnings

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from npconf import run  # noqa: E402
from npconf_elementwise import (binary_programs, convert_programs,  # noqa: E402
                                input_order_programs, rank0_and_empty_programs,
                                unary_programs)
from npconf_structure import (chain_programs, contraction_programs,  # noqa: E402
                              creation_programs, reduction_programs, shape_programs,
                              uneven_programs)

np.seterr(all="ignore")
warnings.simplefilter("ignore", RuntimeWarning)  # numpy warns on the empty mean


def main():
    shardc, mpiexec, work = sys.argv[1:4]
    programs = (unary_programs() + convert_programs() + binary_programs() +
                contraction_programs() + reduction_programs() + shape_programs() +
                creation_programs() + rank0_and_empty_programs() + uneven_programs() +
                chain_programs() + input_order_programs())
    failures, checks = [], 0
    for program in programs:
        checks += 3 * len(program.results)
        failures += run(program, shardc, mpiexec, work)
    for line in failures:
        print(line)
    print("numpy conformance: %d programs, %d checks, %d failures" %
          (len(programs), checks, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
