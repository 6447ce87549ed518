"""Conformance programs of contractions, reductions, shape and creation ops,
dims the mesh does not divide, and fused chains."""
import math

import numpy as np

from npconf import Program
from npconf_values import (DT, F32, F64, I32, I64, INTS32, INTS64, SPECIALS, TOL, erf,
                           int_div, to_int)


def contraction_programs():
    p = Program("contraction")
    rng = np.random.default_rng(5)
    for dtype in (F32, F64):
        a = rng.uniform(-1, 1, (8, 6)).astype(dtype)
        b = rng.uniform(-1, 1, (6, 4)).astype(dtype)
        va, vb = p.input("a_" + DT[dtype], a), p.input("b_" + DT[dtype], b)
        p.check("matmul %s" % DT[dtype], "matmul %s, %s" % (va, vb), a @ b, rtol=TOL[dtype] * 10,
                atol=TOL[dtype])
    # Batched, numpy semantics: batch dims broadcast (2x1 against 5).
    c = rng.uniform(-1, 1, (2, 1, 3, 4)).astype(F32)
    d = rng.uniform(-1, 1, (5, 4, 2)).astype(F32)
    vc, vd = p.input("c", c), p.input("d", d, "{}, {}, {}")
    p.check("matmul batched broadcast", "matmul %s, %s" % (vc, vd), c @ d, rtol=1e-5, atol=1e-6)
    e = rng.uniform(-1, 1, (4, 3, 5)).astype(F32)
    f = rng.uniform(-1, 1, (4, 5, 2)).astype(F32)
    ve, vf = p.input("e", e), p.input("f", f)
    p.check("matmul batched", "matmul %s, %s" % (ve, vf), e @ f, rtol=1e-5, atol=1e-6)
    p.check("einsum bij,bjk->bik", 'einsum "bij,bjk->bik" (%s, %s)' % (ve, vf),
            np.einsum("bij,bjk->bik", e, f), rtol=1e-5, atol=1e-6)
    p.check("einsum bij,bkj->bik", 'einsum "bij,bkj->bik" (%s, %s)' % (ve, ve),
            np.einsum("bij,bkj->bik", e, e), rtol=1e-5, atol=1e-6)
    for equation in ("bij->jbi", "bij->", "bij->bj", "bij,bij->i", "bij,bik->jk"):
        terms = equation.count(",") + 1
        p.check("einsum " + equation, 'einsum "%s" (%s)' % (equation, ", ".join([ve] * terms)),
                np.einsum(equation, *[e] * terms), rtol=1e-5, atol=1e-6)
    # Integers wrap (numpy's integer matmul is exact modulo 2^bits).
    i = rng.integers(-(2**20), 2**20, (4, 6)).astype(I32)
    j = rng.integers(-(2**20), 2**20, (6, 2)).astype(I32)
    vi, vj = p.input("i", i), p.input("j", j)
    p.check("matmul i32 wraps", "matmul %s, %s" % (vi, vj), i @ j)
    p.check("einsum i32 ij,jk->ki", 'einsum "ij,jk->ki" (%s, %s)' % (vi, vj),
            np.einsum("ij,jk->ki", i, j))
    k = rng.integers(-(2**40), 2**40, (2, 4)).astype(I64)
    vk = p.input("k", k)
    p.check("matmul i64 wraps", "matmul %s, %s" % (vk, p.let("kt", "transpose %s {perm = [1, 0]}"
                                                                 % vk)), k @ k.T)
    # An empty contracting dim gives zeros; an empty batch gives nothing.
    z0 = np.zeros((3, 0), F32)
    z1 = np.zeros((0, 2), F32)
    vz0, vz1 = p.input("z0", z0, "{}, {}"), p.input("z1", z1, "{}, {}")
    p.check("matmul empty contraction", "matmul %s, %s" % (vz0, vz1), z0 @ z1)
    nan = np.array([[math.nan, 1.0], [math.inf, 0.0]], F32)
    vn = p.input("nan", nan, "{}, {}")
    p.check("matmul specials", "matmul %s, %s" % (vn, vn), nan @ nan)
    return [p]


def reduction_programs():
    p = Program("reduce")
    rng = np.random.default_rng(7)
    # Many f32 values: numpy sums pairwise; shardc must be as accurate.
    big = rng.uniform(0, 1, (4, 65536)).astype(F32)
    vbig = p.input("big", big)
    p.check("reduce_sum f32 65536", "reduce_sum %s {dims = [1]}" % vbig, big.sum(axis=1),
            rtol=1e-6)
    p.check("reduce_mean f32 all", "reduce_mean %s {dims = [0, 1]}" % vbig, big.mean(), rtol=1e-6)
    x = rng.uniform(-4, 4, (4, 6, 8)).astype(F32)
    vx = p.input("x", x)
    for op, fn in (("reduce_sum", np.sum), ("reduce_max", np.max), ("reduce_min", np.min),
                   ("reduce_mean", np.mean)):
        for dims in ([0], [1], [2], [0, 2], [0, 1, 2]):
            for keep in (False, True):
                p.check("%s f32 %s keep=%s" % (op, dims, keep),
                        "%s %s {dims = %s, keep_dims = %s}" % (op, vx, dims, str(keep).lower()),
                        fn(x, axis=tuple(dims), keepdims=keep), rtol=1e-6, atol=1e-6)
    s = np.array(SPECIALS, F64).reshape(4, 6)
    s[0, :] = [math.nan, 1, 2, 3, 4, 5]
    s[1, :] = [1, -math.inf, 2, 3, 4, 5]
    vs = p.input("s", s, "{}, {}")
    for op, fn in (("reduce_sum", np.sum), ("reduce_max", np.max), ("reduce_min", np.min),
                   ("reduce_mean", np.mean)):
        for dims in ([0], [1]):  # over the rows, and down the columns
            p.check("%s f64 specials %s" % (op, dims), "%s %s {dims = %s}" % (op, vs, dims),
                    fn(s, axis=tuple(dims)), rtol=1e-15)
    s32 = s.astype(F32)
    vs32 = p.input("s32", s32)
    for op, fn in (("reduce_max", np.max), ("reduce_min", np.min)):
        for dims in ([0], [1], [0, 1]):
            p.check("%s f32 specials %s" % (op, dims), "%s %s {dims = %s}" % (op, vs32, dims),
                    fn(s32, axis=tuple(dims)), signed_zeros=False)
    for dtype, values in ((I32, INTS32), (I64, INTS64)):
        # Rows split over "x": the sums wrap across devices too.
        i = np.array(values, dtype).reshape(4, 3)
        vi = p.input("i_" + DT[dtype], i)
        for op, fn in (("reduce_sum", np.sum), ("reduce_max", np.max), ("reduce_min", np.min)):
            for dims in ([0], [1], [0, 1]):
                p.check("%s %s %s" % (op, DT[dtype], dims),
                        "%s %s {dims = %s}" % (op, vi, dims),
                        fn(i, axis=tuple(dims), dtype=dtype) if op == "reduce_sum"
                        else fn(i, axis=tuple(dims)))
        # An integer mean: numpy's mean, then astype (truncation toward zero).
        m = np.array([[1, 2, -3, -4, 9], [-1, -2, 5, 7, 7], [3, 3, 3, 3, -13], [0, 0, 0, 0, 1]],
                     dtype)
        vm = p.input("m_" + DT[dtype], m)
        for dims in ([0], [1], [0, 1]):
            p.check("reduce_mean %s %s" % (DT[dtype], dims),
                    "reduce_mean %s {dims = %s}" % (vm, dims),
                    np.mean(m, axis=tuple(dims)).astype(dtype))
    # The integer mean divides the wrapped sum (numpy's float mean does not
    # wrap; equal while the sum fits, as here: 2^31 - 4).
    w = np.full((4, 2), 2**29 - 1, I32) * np.array([1, -1], I32)
    vw = p.input("w", w)
    p.check("reduce_mean i32 large", "reduce_mean %s {dims = [0]}" % vw,
            np.mean(w, axis=0).astype(I32))
    ei = np.zeros((3, 0), I64)
    vei = p.input("empty_i64", ei, "{}, {}")
    p.check("reduce_mean i64 empty", "reduce_mean %s {dims = [1]}" % vei, np.zeros(3, I64))
    # Empty reductions: numpy's sum is 0 and mean NaN (max and min of
    # nothing are numpy errors; shardc gives the identity, -inf and +inf).
    empty = np.zeros((0, 3), F32)
    ve = p.input("empty", empty, "{}, {}")
    p.check("reduce_sum empty", "reduce_sum %s {dims = [0]}" % ve, empty.sum(axis=0))
    p.check("reduce_mean empty", "reduce_mean %s {dims = [0]}" % ve, empty.mean(axis=0))
    p.check("reduce_max empty", "reduce_max %s {dims = [0]}" % ve, np.full(3, -np.inf, F32))
    p.check("reduce_min empty", "reduce_min %s {dims = [0]}" % ve, np.full(3, np.inf, F32))
    p.check("reduce_sum empty keep", "reduce_sum %s {dims = [1], keep_dims = true}" % ve,
            empty.sum(axis=1, keepdims=True))
    return [p]


def shape_programs():
    p = Program("shape")
    x = np.arange(4 * 6 * 8, dtype=F32).reshape(4, 6, 8) - 50.5
    vx = p.input("x", x)
    i = np.arange(24, dtype=I64).reshape(4, 6) * -3
    vi = p.input("i", i)
    bits = (np.arange(24).reshape(4, 6) % 3 == 0)
    vb = p.input("bits", bits)
    p.check("reshape", "reshape %s : {T}" % vx, x.reshape(8, 3, 8))
    p.check("reshape flat", "reshape %s : {T}" % vx, x.reshape(192))
    p.check("transpose 201", "transpose %s {perm = [2, 0, 1]}" % vx, x.transpose(2, 0, 1))
    p.check("transpose i64", "transpose %s {perm = [1, 0]}" % vi, i.T)
    p.check("transpose i1", "transpose %s {perm = [1, 0]}" % vb, bits.T)
    row = np.array([1.5, -0.0, math.nan, math.inf, -2.0], F32)
    vr = p.input("row", row, "{}")
    p.check("broadcast to rows", "broadcast %s {dims = [1]} : {T}" % vr,
            np.broadcast_to(row, (3, 5)))
    col = np.array([[7], [8], [9]], I32)
    vc = p.input("col", col, "{}, {}")
    p.check("broadcast size-1 dim", "broadcast %s {dims = [1, 2]} : {T}" % vc,
            np.broadcast_to(col, (2, 3, 4)))
    p.check("concat dim 1", "concat %s, %s, %s {dim = 1}" % (vi, vi, vi),
            np.concatenate([i, i, i], axis=1))
    p.check("concat dim 0 i1", "concat %s, %s {dim = 0}" % (vb, vb),
            np.concatenate([bits, bits], axis=0))
    e = np.zeros((4, 0), I64)
    ve = p.input("e", e, "{}, {}")
    p.check("concat with empty", "concat %s, %s, %s {dim = 1}" % (ve, vi, ve),
            np.concatenate([e, i, e], axis=1))
    for start, limit, stride in (([0, 1, 0], [4, 6, 8], [1, 2, 3]), ([1, 0, 7], [4, 5, 8],
                                                                     [2, 4, 1]),
                                 ([3, 2, 1], [4, 6, 8], [5, 5, 5]), ([0, 3, 0], [4, 3, 8],
                                                                     [1, 1, 1])):
        expected = x[tuple(slice(s, l, t) for s, l, t in zip(start, limit, stride))]
        p.check("slice %s:%s:%s" % (start, limit, stride),
                "slice %s {start = %s, limit = %s, stride = %s}" % (vx, start, limit, stride),
                expected)
    p.check("slice no stride", "slice %s {start = [1, 2], limit = [3, 6]}" % vi, i[1:3, 2:6])
    p.check("pad f32", "pad %s {low = [1, 0, 2], high = [0, 3, 1], value = -0.5}" % vx,
            np.pad(x, [(1, 0), (0, 3), (2, 1)], constant_values=-0.5))
    p.check("pad i64", "pad %s {low = [2, 1], high = [1, 0], value = -7}" % vi,
            np.pad(i, [(2, 1), (1, 0)], constant_values=-7))
    p.check("pad i1", "pad %s {low = [0, 1], high = [1, 0], value = 1}" % vb,
            np.pad(bits, [(0, 1), (1, 0)], constant_values=True))
    return [p]


def creation_programs():
    p = Program("creation")
    p.check("constant splat f32", "constant dense<1.5> : {T}", np.full((4, 4), 1.5, F32))
    p.check("constant f64", "constant dense<[[0.1, -2e-3], [1e300, -0.0]]> : {T}",
            np.array([[0.1, -2e-3], [1e300, -0.0]], F64))
    p.check("constant f32 rounding", "constant dense<[0.1, 16777217.0, 3.4e38]> : {T}",
            np.array([0.1, 16777217.0, 3.4e38], F32))
    p.check("constant i32", "constant dense<[[1, -2], [2147483647, -2147483648]]> : {T}",
            np.array([[1, -2], [2**31 - 1, -(2**31)]], I32))
    p.check("constant i64", "constant dense<[9223372036854775807, -5]> : {T}",
            np.array([2**63 - 1, -5], I64))
    p.check("constant i1", "constant dense<[true, false, true]> : {T}",
            np.array([True, False, True]))
    p.check("constant rank 0", "constant dense<-3.25> : {T}", np.array(-3.25, F64))
    for dim in (0, 1):
        for dtype in (I32, I64, F32, F64):
            expected = np.broadcast_to(np.arange(8 if dim == 0 else 6).reshape(
                (-1, 1) if dim == 0 else (1, -1)), (8, 6)).astype(dtype)
            p.check("iota %s dim %d" % (DT[dtype], dim), "iota {dim = %d} : {T}" % dim, expected)
    return [p]


def uneven_programs():
    """Dims the mesh does not divide (4 shards of 5 or 7: padded blocks, one
    of them empty), so padding must never reach a result: reductions over
    the split dims whose values are all negative or all NaN-free extremes,
    a contraction over a split dim, shape ops across the split."""
    p = Program("uneven", mesh='["x"=4]', ranks=4)
    rng = np.random.default_rng(11)
    a = rng.uniform(-3, 3, (5, 7)).astype(F32)
    # NaN in each device's block (rows 0-1, 2-3, 4): max and min combine
    # across devices and must propagate it from any of them.
    a[1, 2], a[3, 6], a[4, 0] = math.nan, math.inf, -math.inf
    a[2, 4], a[4, 5], a[0, 1] = math.nan, math.nan, -math.inf
    va = p.input("a", a, '{"x"}, {}')
    row = rng.uniform(-1, 1, 7).astype(F32)
    vrow = p.input("row", row, '{"x"}')
    neg = -rng.integers(1, 1000, (5, 7)).astype(I32)
    vneg = p.input("neg", neg, '{"x"}, {}')
    pos = rng.uniform(1, 5, (7, 5)).astype(F64)
    vpos = p.input("pos", pos, '{}, {"x"}')
    w = rng.uniform(-1, 1, (7, 3)).astype(F32)
    vw = p.input("w", w, '{"x"}, {}')
    p.check("round", "round %s" % va, np.round(a))
    p.check("sign", "sign %s" % va, np.sign(a))
    p.check("add 1-D row", "add %s, %s" % (va, vrow), a + row)
    p.check("max with NaN", "max %s, %s" % (vrow, va), np.maximum(row, a), signed_zeros=False)
    p.check("lt", "lt %s, %s" % (va, vrow), a < row)
    for op, fn in (("reduce_sum", np.sum), ("reduce_max", np.max), ("reduce_min", np.min),
                   ("reduce_mean", np.mean)):
        for dims in ([0], [1], [0, 1]):
            p.check("%s f32 %s" % (op, dims), "%s %s {dims = %s}" % (op, va, dims),
                    fn(a, axis=tuple(dims)), rtol=1e-6, atol=1e-6)
        for name, value, array in (("neg i32", vneg, neg), ("pos f64", vpos, pos)):
            expected = fn(array, axis=0)
            if op == "reduce_mean" and array.dtype == I32:
                expected = expected.astype(I32)
            p.check("%s %s over split" % (op, name), "%s %s {dims = [0]}" % (op, value),
                    expected.astype(array.dtype), rtol=1e-12, atol=1e-12)
    p.check("matmul split contraction", "matmul %s, %s" % (p.let("a_finite", "min %s, %s" % (
        va, p.let("three", "constant dense<3.0> : tensor<f32>"))), vw),
            np.minimum(a, F32(3)) @ w, rtol=1e-5, atol=1e-5)
    p.check("reshape across split", "reshape %s : {T}" % va, a.reshape(35))
    p.check("reshape 7x5", "reshape %s : {T}" % va, a.reshape(7, 5))
    p.check("transpose", "transpose %s {perm = [1, 0]}" % va, a.T)
    p.check("slice strided", "slice %s {start = [1, 0], limit = [5, 7], stride = [2, 3]}" % va,
            a[1:5:2, 0:7:3])
    p.check("pad split dim", "pad %s {low = [2, 0], high = [1, 1], value = 9.5}" % va,
            np.pad(a, [(2, 1), (0, 1)], constant_values=9.5))
    p.check("concat split dim", "concat %s, %s {dim = 0}" % (va, va), np.concatenate([a, a]))
    p.check("broadcast", "broadcast %s {dims = [1]} : {T}" % vrow, np.broadcast_to(row, (3, 7)))
    p.check("iota", "iota {dim = 0} : {T}", np.broadcast_to(np.arange(9, dtype=I64)[:, None],
                                                              (9, 3)))
    q = Program("two_ranks", mesh='["x"=2]', ranks=2)
    c = rng.uniform(-1, 1, (2, 1, 3, 4)).astype(F32)
    d = rng.uniform(-1, 1, (5, 4, 2)).astype(F32)
    e = rng.uniform(-1, 1, (4, 2)).astype(F32)
    vc = q.input("c", c, '{"x"}, {}, {}, {}')
    vd = q.input("d", d, '{}, {"x"}, {}')
    ve = q.input("e", e, '{"x"}, {}')
    q.check("matmul broadcast batch, split", "matmul %s, %s" % (vc, vd), c @ d, rtol=1e-5,
            atol=1e-6)
    q.check("matmul N-D by 2-D", "matmul %s, %s" % (vc, ve), c @ e, rtol=1e-5, atol=1e-6)
    x = rng.uniform(-1, 1, (4, 1, 6)).astype(F64)
    y = rng.uniform(-1, 1, (3, 1)).astype(F64)
    vx, vy = q.input("x", x, '{"x"}, {}, {}'), q.input("y", y, "{}, {}")
    q.check("broadcast (4,1,6) (3,1)", "mul %s, %s" % (vx, vy), x * y)
    q.check("pow broadcast", "pow %s, %s" % (vy, vx), np.power(y, x), rtol=1e-13)
    pred = rng.uniform(-1, 1, 6) > 0
    vp = q.input("pred", pred, '{"x"}')
    q.check("select rank-promoted", "select %s, %s, %s" % (vp, vx, vy), np.where(pred, x, y))
    i = rng.integers(-50, 50, (6, 8)).astype(I64)
    vi = q.input("i", i, '{}, {"x"}')
    q.check("div i64 split", "div %s, %s" % (vi, q.let("seven", "constant dense<-7> : "
                                                              "tensor<i64>")),
            int_div(i, np.array(-7, I64)))
    q.check("reduce_mean i64 split", "reduce_mean %s {dims = [1]}" % vi,
            np.mean(i, axis=1).astype(I64))
    return [p, q]


def chain_programs():
    """Chains the executable fuses into one loop or row kernel (softmax,
    layer norm, gelu, casts inside reductions): the fused code must give
    each op's value as numpy computes it op by op."""
    p = Program("chains")
    rng = np.random.default_rng(13)
    x = rng.uniform(-30, 30, (8, 64)).astype(F32)
    x[1, :] = -math.inf  # a row of -inf: max -inf, then NaN throughout (numpy)
    x[2, 5] = math.nan
    x[3, 7] = math.inf
    x[4, :] = 0.0
    vx = p.input("x", x)
    m = p.let("m", "reduce_max %s {dims = [1], keep_dims = true}" % vx)
    e = p.let("e", "exp %s" % p.let("xm", "sub %s, %s" % (vx, m)))
    s = p.let("s", "reduce_sum %s {dims = [1], keep_dims = true}" % e)
    with np.errstate(all="ignore"):
        ex = np.exp(x - x.max(axis=1, keepdims=True))
        p.check("softmax", "div %s, %s" % (e, s), ex / ex.sum(axis=1, keepdims=True), rtol=1e-6,
                atol=1e-30)
    mean = p.let("mean", "reduce_mean %s {dims = [1], keep_dims = true}" % vx)
    d = p.let("d", "sub %s, %s" % (vx, mean))
    var = p.let("var", "reduce_mean %s {dims = [1], keep_dims = true}" % p.let(
        "d2", "mul %s, %s" % (d, d)))
    eps = p.let("eps", "constant dense<1e-5> : tensor<f32>")
    xd = x - x.mean(axis=1, keepdims=True)
    p.check("layer norm", "mul %s, %s" % (d, p.let("inv", "rsqrt %s" % p.let(
        "ve", "add %s, %s" % (var, eps)))),
            xd / np.sqrt((xd * xd).mean(axis=1, keepdims=True) + F32(1e-5)), rtol=1e-5,
            atol=1e-6)
    half = p.let("half", "constant dense<0.5> : tensor<f32>")
    r2 = p.let("r2", "constant dense<0.70710678118654752> : tensor<f32>")
    g = p.let("g", "erf %s" % p.let("xs", "mul %s, %s" % (vx, r2)))
    gelu = p.let("gelu", "mul %s, %s" % (p.let("hx", "mul %s, %s" % (vx, half)), p.let(
        "g1", "add %s, %s" % (g, p.let("one", "constant dense<1.0> : tensor<f32>")))))
    p.check("gelu", "identity %s" % gelu, (x * F32(0.5)) * (erf(x * F32(0.70710678118654752)) + 1),
            rtol=1e-6, atol=1e-30)
    xi = p.let("xi", "convert %s : tensor<8x64xi32>" % vx)
    p.check("f32 -> i32 -> f32", "convert %s : {T}" % xi, to_int(x, I32).astype(F32))
    positive = p.let("positive", "gt %s, %s" % (vx, p.let("zero", "constant dense<0.0> : "
                                                                "tensor<f32>")))
    p.check("count of positives", "reduce_sum %s {dims = [1]}" % p.let(
        "pi", "convert %s : tensor<8x64xi64>" % positive), (x > 0).sum(axis=1).astype(I64))
    p.check("relu sum down columns", "reduce_sum %s {dims = [0]}" % p.let("rx", "relu %s" % vx),
            np.maximum(x, 0).astype(F64).sum(axis=0).astype(F32), rtol=1e-6)
    # Fused arithmetic rounds after every op as numpy does (no FMA), so it
    # is exact; a division by a scalar is within 2 ulp (a multiplication by
    # the reciprocal, docs/backend-and-runtime.md).
    y = rng.uniform(-1, 1, (8, 64)).astype(F32)
    vy = p.input("y", y)
    p.check("mul add sub chain exact", "sub %s, %s" % (p.let("xyx", "add %s, %s" % (
        p.let("xy", "mul %s, %s" % (vx, vy)), vx)), vy), x * y + x - y)
    third = p.let("third", "constant dense<3.0> : tensor<f32>")
    p.check("div by scalar", "div %s, %s" % (vy, third), y / F32(3), rtol=2.5e-7)
    p.check("transposed chain", "transpose %s {perm = [1, 0]}" % p.let(
        "tx", "tanh %s" % p.let("x2", "mul %s, %s" % (vx, vx))), np.tanh(x * x).T, rtol=1e-6)
    return [p]
