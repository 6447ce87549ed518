"""The .shd programs the benchmarks compile, written for a given size.

Every program is ordinary shardc input: `shardc FILE -o EXE` builds it and
`mpiexec -n RANKS EXE --random-inputs 1 --repeat K --profile` times it.
"""


def _tensor(shape, dtype):
    return "tensor<" + "x".join(str(d) for d in shape) + f"x{dtype}>"


def _mesh(ranks):
    return f'@mesh = <["x"={ranks}]>\n\n'


def matmul(n, dtype, ranks):
    """C = A B with all three matrices split by rows: each rank gathers B
    (the one collective) and multiplies its rows of A."""
    t = _tensor([n, n], dtype)
    rows = 'sharding<@mesh, [{"x"}, {}]>'
    return (
        _mesh(ranks)
        + f"func @main(%a: {t} {rows},\n           %b: {t} {rows})\n"
        + f"    -> {t} {rows} {{\n"
        + f"  %c = matmul %a, %b : {t} {rows}\n"
        + "  return %c\n}\n"
    )


def mlp(batch, model, hidden, ranks):
    """A two-layer MLP forward pass, Megatron style: W1 split by columns, W2
    by rows, so the hidden activation stays split and the only collective is
    the all_reduce of the second matmul's partial sums."""
    x = _tensor([batch, model], "f32")
    return (
        _mesh(ranks)
        + f'func @main(%x: {x} sharding<@mesh, [{{}}, {{}}]>,\n'
        + f'           %w1: {_tensor([model, hidden], "f32")} sharding<@mesh, [{{}}, {{"x"}}]>,\n'
        + f'           %b1: {_tensor([hidden], "f32")} sharding<@mesh, [{{"x"}}]>,\n'
        + f'           %w2: {_tensor([hidden, model], "f32")} sharding<@mesh, [{{"x"}}, {{}}]>,\n'
        + f'           %b2: {_tensor([model], "f32")} sharding<@mesh, [{{}}]>)\n'
        + f'    -> {x} sharding<@mesh, [{{}}, {{}}]> {{\n'
        + "  %h = matmul %x, %w1\n"
        + "  %hb = add %h, %b1\n"
        + "  %a = relu %hb\n"
        + f'  %y = matmul %a, %w2 : {x} sharding<@mesh, [{{}}, {{}}]>\n'
        + "  %out = add %y, %b2\n"
        + "  return %out\n}\n"
    )


def elementwise(per_rank, ranks, fused):
    """tanh(a * b + c) over `per_rank` f32 per rank. The unfused variant
    returns the intermediates: a returned value is never fused, so each op
    becomes its own loop over memory."""
    t = _tensor([per_rank * ranks], "f32")
    split = 'sharding<@mesh, [{"x"}]>'
    results = f"{t} {split}" if fused else f"({t}, {t}, {t})"
    returned = "%r" if fused else "%m, %s, %r"
    return (
        _mesh(ranks)
        + f"func @main(%a: {t} {split},\n           %b: {t} {split},\n"
        + f"           %c: {t} {split})\n    -> {results} {{\n"
        + "  %m = mul %a, %b\n  %s = add %m, %c\n  %r = tanh %s\n"
        + f"  return {returned}\n}}\n"
    )


# Each collective on a tensor of `elements` f32 per device (the gathered result
# for all_gather, the operand for the others), in a manual_computation so that
# the program is that one collective.
_COLLECTIVES = {
    "all_gather": ("all_gather %l {dim = 0, axes = {\"x\"}}", "gathered"),
    "all_to_all": ("all_to_all %l {split_dim = 1, concat_dim = 0, axes = {\"x\"}}", "same"),
    "all_reduce": ("all_reduce %l {axes = {\"x\"}, kind = \"sum\"}", "same"),
    "reduce_scatter": ("reduce_scatter %l {dim = 0, axes = {\"x\"}}", "scattered"),
    "collective_permute": ("collective_permute %l {pairs = PAIRS}", "same"),
}

COLLECTIVE_KINDS = list(_COLLECTIVES)


def collective(kind, elements, ranks):
    """The program of one reshard kind moving `elements` f32 per device. The
    local tensors are 2-D (rows x 256) so that all_to_all moves a split dim 1
    into dim 0, as a resharding [{"x"}, {}] -> [{}, {"x"}] does."""
    cols = 256
    rows = elements // cols
    text, result = _COLLECTIVES[kind]
    text = text.replace("PAIRS", str([[i, (i + 1) % ranks] for i in range(ranks)]))
    local_in = [rows // ranks, cols] if kind == "all_gather" else [rows, cols]
    local_out = {"gathered": [rows, cols], "scattered": [rows // ranks, cols], "same": local_in}[result]
    if kind == "all_to_all":
        local_out = [rows * ranks, cols // ranks]
    # Global shapes: every local dim-0 block is one device's.
    glob_in = [local_in[0] * ranks, local_in[1]]
    glob_out = [local_out[0] * ranks, local_out[1]]
    split = 'sharding<@mesh, [{"x"}, {}]>'
    return (
        _mesh(ranks)
        + f"func @main(%a: {_tensor(glob_in, 'f32')} {split})\n"
        + f"    -> {_tensor(glob_out, 'f32')} {split} {{\n"
        + f"  %r = manual_computation (%a) in_shardings=[{split}]\n"
        + f"      out_shardings=[{split}] manual_axes={{\"x\"}}\n"
        + f"      (%l: {_tensor(local_in, 'f32')}) {{\n"
        + f"    %t = {text} : {_tensor(local_out, 'f32')}\n"
        + f"    return %t\n  }} : {_tensor(glob_out, 'f32')}\n"
        + "  return %r\n}\n"
    )


def trivial(ranks):
    """The least a program can do on `ranks` devices: start, add, stop."""
    t = _tensor([ranks * 4], "f32")
    split = 'sharding<@mesh, [{"x"}]>'
    return (
        _mesh(ranks)
        + f"func @main(%a: {t} {split}) -> {t} {split} {{\n"
        + "  %r = add %a, %a\n  return %r\n}\n"
    )


def loop_layer(n, model, iterations, ranks, unrolled):
    """`iterations` steps of h <- tanh(0.5 * h W) with h split by rows and W
    replicated (no collective in the step): as a `for` loop carrying h, or
    the same body written out `iterations` times. The loop should cost no
    more than the unrolled copy."""
    h = _tensor([n, model], "f32")
    w = _tensor([model, model], "f32")
    rows = 'sharding<@mesh, [{"x"}, {}]>'
    head = (_mesh(ranks) + f"func @main(%x: {h} {rows}, %w: {w}) -> {h} {rows} {{\n"
            + "  %half = constant dense<0.5> : tensor<f32>\n")

    def step(src, dst, indent):
        return (f"{indent}%m_{dst} = matmul {src}, %w\n"
                f"{indent}%s_{dst} = mul %m_{dst}, %half\n"
                f"{indent}%h_{dst} = tanh %s_{dst}\n")

    if unrolled:
        body, prev = "", "%x"
        for i in range(iterations):
            body += step(prev, i, "  ")
            prev = f"%h_{i}"
        return head + body + f"  return {prev}\n}}\n"
    return (head + f"  %y = for %i = 0 to {iterations} carry(%h = %x) {{\n"
            + step("%h", "next", "    ") + "    return %h_next\n"
            + f"  }} : {h}\n  return %y\n}}\n")


def softmax(heads, rows, cols, ranks):
    """Numerically stable softmax over the last dim of a heads x rows x cols
    f32 tensor with the heads split over the ranks, as attention computes it."""
    t = _tensor([heads, rows, cols], "f32")
    split = 'sharding<@mesh, [{"x"}, {}, {}]>'
    return (
        _mesh(ranks)
        + f"func @main(%s: {t} {split}) -> {t} {split} {{\n"
        + "  %m = reduce_max %s {dims = [2], keep_dims = true}\n"
        + "  %z = sub %s, %m\n  %e = exp %z\n"
        + "  %sum = reduce_sum %e {dims = [2], keep_dims = true}\n"
        + "  %p = div %e, %sum\n  return %p\n}\n"
    )


def broadcast_chain(heads, rows, cols, ranks, operand):
    """exp(s - m) over heads x rows x cols f32, the heads split over the ranks,
    with `m` a broadcast operand: "rows" is heads x rows x 1 (a row max, read
    once per row), "columns" is a vector of cols (the same for every row),
    "transposed" is heads x cols x rows read through a transpose."""
    t = _tensor([heads, rows, cols], "f32")
    split = 'sharding<@mesh, [{"x"}, {}, {}]>'
    if operand == "rows":
        m, body = f"{_tensor([heads, rows, 1], 'f32')} {split}", "  %z = sub %s, %m\n"
    elif operand == "columns":
        m, body = _tensor([cols], "f32"), "  %z = sub %s, %m\n"
    else:
        m = f"{_tensor([heads, cols, rows], 'f32')} {split}"
        body = (f"  %mt = transpose %m {{perm = [0, 2, 1]}} : {t} {split}\n"
                "  %z = sub %s, %mt\n")
    return (
        _mesh(ranks)
        + f"func @main(%s: {t} {split},\n           %m: {m}) -> {t} {split} {{\n"
        + body + "  %e = exp %z\n  return %e\n}\n"
    )
