"""The values the numpy conformance programs use, and the expected value
where numpy defines none (numpy_conformance.py's docstring lists the rules)."""
import math

import numpy as np

F32, F64, I32, I64, B = np.float32, np.float64, np.int32, np.int64, np.bool_
DT = {F32: "f32", F64: "f64", I32: "i32", I64: "i64", B: "i1"}
TOL = {F32: 1e-6, F64: 1e-13}

# The float values every float op meets: IEEE specials, signed zeros,
# half-way points, tiny and huge values (24 of them).
SPECIALS = [math.nan, math.inf, -math.inf, 0.0, -0.0, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 1e-3,
            -7.25, 3.0, 100.0, -100.0, 1e30, -1e30, 0.75, -0.3, 1e-40, 16777217.0, 88.5, -88.5]
INTS32 = [-(2**31), -(2**31) + 1, 2**31 - 1, -7, -2, -1, 0, 1, 2, 3, 7, 100000]
INTS64 = [-(2**63), 2**63 - 1, 2**40 + 3, -(2**35), -7, -2, -1, 0, 1, 2, 3, 7]


def erf(x):
    return np.vectorize(math.erf)(x.astype(F64)).astype(x.dtype)


def sigmoid(x):
    return (1 / (1 + np.exp(-x.astype(F64)))).astype(x.dtype)


def to_int(x, dtype):
    """float -> int: truncation; NaN, infinities and out-of-range values give
    the type's minimum (numpy astype on x86)."""
    info = np.iinfo(dtype)
    wide = x.astype(F64)
    ok = np.isfinite(wide) & (np.trunc(wide) >= info.min) & (np.trunc(wide) <= info.max)
    return np.where(ok, np.trunc(np.where(ok, wide, 0)), info.min).astype(dtype)


def wrap(value, dtype):
    """An exact Python int wrapped to `dtype` (two's complement)."""
    info = np.iinfo(dtype)
    return (value - info.min) % (1 << info.bits) + info.min


def int_div(a, b):
    """Truncating division on exact Python ints; x / 0 = 0; wraps."""
    a, b = np.broadcast_arrays(a, b)
    out = []
    for x, y in zip(a.flat, b.flat):
        x, y = int(x), int(y)
        q = 0 if y == 0 else abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
        out.append(wrap(q, a.dtype))
    return np.array(out, dtype=a.dtype).reshape(a.shape)


def int_pow(a, b):
    """numpy's power where the exponent is >= 0 (wraps); the truncated exact
    value where it is negative."""
    positive = np.power(a, np.maximum(b, 0))
    negative = np.where(a == 1, 1, np.where(a == -1, np.where(b % 2 == 0, 1, -1), 0))
    return np.where(b >= 0, positive, negative).astype(a.dtype)
