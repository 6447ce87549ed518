"""Writes float32 .npy files (format version 1.0) without numpy, for the
benchmarks' inputs (the executables read them with --input)."""
import array
import random


def write_uniform(path, shape, low, high, seed):
    """DIR/NAME.npy of `shape`, little-endian f32, uniform in [low, high)."""
    rng = random.Random(seed)
    count = 1
    for d in shape:
        count *= d
    span = high - low
    data = array.array("f", (low + span * rng.random() for _ in range(count)))
    if data.itemsize != 4:
        raise RuntimeError("array('f') is not 4 bytes on this machine")
    if array.array("H", [1]).tobytes()[0] != 1:
        data.byteswap()  # .npy is little-endian here ('<f4')
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    header = f"{{'descr': '<f4', 'fortran_order': False, 'shape': ({dims}), }}"
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * (pad % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode())
        f.write(data.tobytes())
