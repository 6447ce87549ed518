"""Conformance programs of the elementwise ops: unary, convert, binary and
comparisons, select, rank-0 and empty operands, inputs in Fortran order."""
import numpy as np

from npconf import Program
from npconf_values import (B, DT, F32, F64, I32, I64, INTS32, INTS64, SPECIALS, TOL, erf,
                           int_div, int_pow, sigmoid, to_int)


UNARY_FLOAT = {
    "abs": (np.abs, None), "neg": (np.negative, None), "exp": (np.exp, 1),
    "log": (np.log, 1), "sqrt": (np.sqrt, None), "rsqrt": (lambda x: 1 / np.sqrt(x), 1),
    "tanh": (np.tanh, 1), "sigmoid": (sigmoid, 1), "relu": (lambda x: np.maximum(x, 0), None),
    "sin": (np.sin, 1), "cos": (np.cos, 1), "floor": (np.floor, None), "ceil": (np.ceil, None),
    "round": (np.round, None), "sign": (np.sign, None), "reciprocal": (lambda x: 1 / x, None),
    "erf": (erf, 1), "identity": (lambda x: x, None),
}


def unary_programs():
    p = Program("unary")
    for dtype in (F32, F64):
        x = np.array(SPECIALS, dtype=dtype).reshape(4, 6)
        v = p.input("x_" + DT[dtype], x)
        for op, (fn, tol) in UNARY_FLOAT.items():
            p.check("%s %s" % (op, DT[dtype]), "%s %s" % (op, v), fn(x),
                    rtol=tol and TOL[dtype], atol=1e-300 if dtype == F64 else 1e-38)
    for dtype, values in ((I32, INTS32), (I64, INTS64)):
        x = np.array(values, dtype=dtype).reshape(3, 4)
        v = p.input("i_" + DT[dtype], x)
        for op, fn in (("abs", np.abs), ("neg", np.negative), ("sign", np.sign),
                       ("relu", lambda x: np.maximum(x, 0)), ("not", np.invert),
                       ("identity", lambda x: x)):
            p.check("%s %s" % (op, DT[dtype]), "%s %s" % (op, v), fn(x))
    bits = np.array([[True, False, True, True], [False, False, True, False]])
    v = p.input("bits", bits)
    p.check("not i1", "not %s" % v, ~bits)
    p.check("identity i1", "identity %s" % v, bits)
    return [p]


def convert_programs():
    p = Program("convert")
    f = np.array(SPECIALS + [3e9, -3e9, 5e9, -2.7, 2.7, -0.99, 2147483520.0, -2147483648.0,
                             1e19, -9.3e18, 9.2e18, 0.1], dtype=F32).reshape(6, 6)
    d = np.array(SPECIALS + [3e9, -3e9, 2147483647.9, -2147483648.9, -2147483649.0, 1e300,
                             -1e300, 1e-320, 9.3e18, -9.3e18, 4.1e9, -0.99], F64).reshape(6, 6)
    i = np.array(INTS32 + [16777217, -16777219, 2**30 + 1, 5], I32).reshape(4, 4)
    # 2^60 + 2^36 + 1 is just above a half-way point of f32 but rounds to it
    # in f64: i64 -> f32 must round once.
    j = np.array(INTS64 + [2**53 + 1, 2**60 + 2**36 + 1, -(2**60) - 2**36 - 1, 2**31],
                 I64).reshape(4, 4)
    bits = np.array([True, False, False, True] * 4).reshape(4, 4)
    values = {F32: p.input("f", f), F64: p.input("d", d), I32: p.input("i", i),
              I64: p.input("j", j), B: p.input("bits", bits)}
    arrays = {F32: f, F64: d, I32: i, I64: j, B: bits}
    for source, array in arrays.items():
        for target in (F32, F64, I32, I64, B):
            if np.dtype(target).kind == "i" and array.dtype.kind == "f":
                expected = to_int(array, target)
            else:
                expected = array.astype(target)
            p.check("%s->%s" % (DT[source], DT[target]), "convert %s : {T}" % values[source],
                    expected)
    return [p]


BINARY_FLOAT = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
    "max": np.maximum, "min": np.minimum, "pow": np.power,
}
COMPARISONS = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
               "gt": np.greater, "ge": np.greater_equal}


def binary_programs():
    p = Program("binary_float")
    for dtype in (F32, F64):
        # A column against a row: every pair of specials, broadcast both ways.
        a = np.array(SPECIALS, dtype=dtype).reshape(24, 1)
        b = np.array(SPECIALS, dtype=dtype).reshape(1, 24)
        va = p.input("a_" + DT[dtype], a, '{"x"}, {}')
        vb = p.input("b_" + DT[dtype], b, '{}, {"y"}')
        for op, fn in BINARY_FLOAT.items():
            # Which zero max(0, -0) gives depends on numpy's SIMD loop (IEEE
            # allows either): zeros' signs are not checked there.
            tol = TOL[dtype] if op == "pow" else None
            p.check("%s %s" % (op, DT[dtype]), "%s %s, %s" % (op, va, vb), fn(a, b), rtol=tol,
                    signed_zeros=op not in ("max", "min"))
        for op, fn in COMPARISONS.items():
            p.check("%s %s" % (op, DT[dtype]), "%s %s, %s" % (op, va, vb), fn(a, b))
    q = Program("binary_int")
    for dtype, values in ((I32, INTS32), (I64, INTS64)):
        a = np.array(values, dtype=dtype).reshape(12, 1)
        b = np.array(values, dtype=dtype).reshape(1, 12)
        va = q.input("a_" + DT[dtype], a, '{"x"}, {}')
        vb = q.input("b_" + DT[dtype], b, '{}, {"y"}')
        for op, fn in (("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                       ("div", int_div), ("max", np.maximum), ("min", np.minimum),
                       ("and", np.bitwise_and), ("or", np.bitwise_or),
                       ("xor", np.bitwise_xor), *COMPARISONS.items()):
            q.check("%s %s" % (op, DT[dtype]), "%s %s, %s" % (op, va, vb), fn(a, b))
        e = np.array([-3, -2, -1, 0, 1, 2, 5, 31, 63], dtype=dtype).reshape(1, 9)
        ve = q.input("e_" + DT[dtype], e, "{}, {}")
        q.check("pow %s" % DT[dtype], "pow %s, %s" % (va, ve), int_pow(a, e))
    x = np.array([True, True, False, False]).reshape(4, 1)
    y = np.array([True, False]).reshape(1, 2)
    vx, vy = q.input("x_i1", x), q.input("y_i1", y, "{}, {}")
    for op, fn in (("and", np.logical_and), ("or", np.logical_or), ("xor", np.logical_xor),
                   *COMPARISONS.items()):
        q.check("%s i1" % op, "%s %s, %s" % (op, vx, vy), fn(x, y))
    # select: the predicate, both branches and a rank-0 operand broadcast.
    pred = np.array([[True], [False], [True], [False]])
    on_true = np.arange(6, dtype=F32).reshape(1, 6) - 2.5
    on_false = np.array(-0.0, dtype=F32)
    vp, vt, vf = q.input("pred", pred), q.input("on_true", on_true), q.input("on_false",
                                                                              on_false, "")
    q.check("select f32", "select %s, %s, %s" % (vp, vt, vf), np.where(pred, on_true, on_false))
    ints = np.array([[7, -8, 9]], I64)
    vi = q.input("ints", ints, "{}, {}")
    q.check("select i64", "select %s, %s, %s" % (vp, vi, q.let("neg_ints", "neg %s" % vi)),
            np.where(pred, ints, -ints))
    return [p, q]


def rank0_and_empty_programs():
    p = Program("rank0_empty")
    s = np.array(-2.5, F32)
    vs = p.input("s", s, "")
    m = np.arange(12, dtype=F32).reshape(3, 4)
    vm = p.input("m", m)
    p.check("exp rank 0", "exp %s" % vs, np.exp(s), rtol=1e-6)
    p.check("add rank 0 + 2-D", "add %s, %s" % (vs, vm), s + m)
    p.check("max 2-D, rank 0", "max %s, %s" % (vm, vs), np.maximum(m, s))
    p.check("convert rank 0", "convert %s : {T}" % vs, to_int(s, I32))
    p.check("reduce to rank 0", "reduce_sum %s {dims = [0, 1]}" % vm, m.sum())
    p.check("reshape rank 0", "reshape %s : {T}" % vs, s.reshape(1, 1))
    p.check("reduce rank 0 no dims", "reduce_max %s {dims = []}" % vs, s)
    e = np.zeros((0, 4), F32)
    ve = p.input("e", e, "{}, {}")
    p.check("exp empty", "exp %s" % ve, np.exp(e))
    p.check("add empty", "add %s, %s" % (ve, ve), e + e)
    p.check("add empty broadcast", "add %s, %s" % (ve, p.let("row", "slice %s {start = [0, 0], "
                                                                  "limit = [1, 4]}" % vm)),
            e + m[0:1])
    p.check("convert empty", "convert %s : {T}" % ve, e.astype(I64))
    p.check("transpose empty", "transpose %s {perm = [1, 0]}" % ve, e.T)
    # A size-0 dim split over the mesh: every device holds nothing of it.
    vez = p.input("ez", e, '{"x"}, {"y"}')
    p.check("exp empty split", "exp %s" % vez, np.exp(e))
    p.check("reduce_sum empty split", "reduce_sum %s {dims = [0]}" % vez, e.sum(axis=0))
    p.check("reduce_min empty split", "reduce_min %s {dims = [0]}" % vez, np.full(4, np.inf, F32))
    p.check("matmul empty split", "matmul %s, %s" % (p.let("ezt", "transpose %s {perm = [1, 0]}"
                                                             % vez), vez), e.T @ e)
    return [p]


def input_order_programs():
    """Inputs as numpy saves them: np.save of an F-contiguous array (a
    transposed one) writes the file in Fortran order, which each device reads
    its block of."""
    p = Program("fortran_inputs")
    rng = np.random.default_rng(17)
    a = rng.uniform(-1, 1, (6, 4)).astype(F32)
    va = p.input("a", a, fortran=True)
    b = rng.integers(-9, 9, (4, 3, 6)).astype(I64)
    vb = p.input("b", b, '{"x"}, {}, {"y"}', fortran=True)
    c = np.array([[True, False, False], [True, True, False]])
    vc = p.input("c", c, "{}, {}", fortran=True)
    p.check("f32 read", "identity %s" % va, a)
    p.check("i64 read, split", "identity %s" % vb, b)
    p.check("i1 read", "identity %s" % vc, c)
    p.check("used", "add %s, %s" % (va, va), a + a)
    return [p]
