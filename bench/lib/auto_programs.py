"""The programs of the auto-shard quality workload: an MLP, an attention block
and a pre-norm transformer layer, each written once and sharded by a plan.

A plan names the mesh axes that split the batch (`data`) and the ones that
split the model: the hidden dim of the MLP and the heads of the attention
(`model`, Megatron's tensor parallelism). Only the parameters and the result
carry shardings; propagation decides the rest, as a user writing the plan by
hand would leave it. The "auto" plan writes no sharding at all.
"""
import re


class Plan:
    """`data` axes split the batch, `model` axes split hidden units and heads;
    `auto` leaves every sharding to `shardc --auto-shard`."""

    def __init__(self, name, data=(), model=(), auto=False):
        self.name, self.data, self.model, self.auto = name, tuple(data), tuple(model), auto

    def sharding(self, *dims):
        """`sharding<@mesh, [...]>` with each dim "data", "model" or None, or
        nothing for the auto plan."""
        if self.auto:
            return ""
        axes = {"data": self.data, "model": self.model, None: ()}
        text = ", ".join("{" + ", ".join(f'"{a}"' for a in axes[d]) + "}" for d in dims)
        return f" sharding<@mesh, [{text}]>"


def hand_plans(axes):
    """The hand plans on a mesh of `axes` (1 or 2 axes): replicated, data
    parallel and Megatron over every axis, and on two axes the 2-D mixes
    (the batch over one axis, the model over the other)."""
    plans = [Plan("replicated"), Plan("data", data=axes), Plan("megatron", model=axes)]
    if len(axes) == 2:
        a, b = axes
        plans += [Plan(f"data {a} + megatron {b}", data=(a,), model=(b,)),
                  Plan(f"data {b} + megatron {a}", data=(b,), model=(a,))]
    return plans


def _t(*shape):
    return "tensor<" + "x".join(str(d) for d in shape) + "xf32>"


def _mesh(mesh):
    return "@mesh = <[" + ", ".join(f'"{a}"={n}' for a, n in mesh) + "]>\n\n"


def mlp(mesh, plan, batch, model, hidden):
    """y = relu(x W1 + b1) W2 on x [batch, model]."""
    s = plan.sharding
    return (_mesh(mesh)
            + f"func @main(%x: {_t(batch, model)}{s('data', None)},\n"
            + f"           %w1: {_t(model, hidden)}{s(None, 'model')},\n"
            + f"           %b1: {_t(hidden)}{s('model')},\n"
            + f"           %w2: {_t(hidden, model)}{s('model', None)})\n"
            + f"    -> {_t(batch, model)}{s('data', None)} {{\n"
            + "  %h = matmul %x, %w1\n"
            + "  %hb = add %h, %b1\n"
            + "  %a = relu %hb\n"
            + "  %y = matmul %a, %w2\n"
            + "  return %y\n}\n")


def _attention_body(x, batch, seq, heads, head_dim):
    """Multi-head self-attention of `x` [batch, seq, model] with residual;
    the result is %r."""
    scores = _t(batch, heads, seq, seq)
    per_head = _t(batch, heads, seq, head_dim)
    return (f'  %q = einsum "bsm,mhd->bhsd" ({x}, %wq) : {per_head}\n'
            f'  %k = einsum "bsm,mhd->bhsd" ({x}, %wk) : {per_head}\n'
            f'  %v = einsum "bsm,mhd->bhsd" ({x}, %wv) : {per_head}\n'
            f'  %s = einsum "bhqd,bhkd->bhqk" (%q, %k) : {scores}\n'
            f"  %scale = constant dense<{head_dim ** -0.5:.6f}> : tensor<f32>\n"
            "  %ss = mul %s, %scale\n"
            f"  %max = reduce_max %ss {{dims = [3], keep_dims = true}} : "
            f"{_t(batch, heads, seq, 1)}\n"
            "  %z = sub %ss, %max\n"
            "  %e = exp %z\n"
            f"  %sum = reduce_sum %e {{dims = [3], keep_dims = true}} : "
            f"{_t(batch, heads, seq, 1)}\n"
            "  %p = div %e, %sum\n"
            f'  %o = einsum "bhqk,bhkd->bhqd" (%p, %v) : {per_head}\n'
            f'  %attn = einsum "bhsd,hdm->bsm" (%o, %wo) : {_t(batch, seq, heads * head_dim)}\n'
            "  %r = add %x, %attn\n")


def _attention_params(s, model, heads, head_dim):
    w = _t(model, heads, head_dim)
    return (f"           %wq: {w}{s(None, 'model', None)},\n"
            f"           %wk: {w}{s(None, 'model', None)},\n"
            f"           %wv: {w}{s(None, 'model', None)},\n"
            f"           %wo: {_t(heads, head_dim, model)}{s('model', None, None)}")


def attention(mesh, plan, batch, seq, heads, head_dim):
    """x + MultiHeadAttention(x) on x [batch, seq, heads * head_dim]."""
    s, model = plan.sharding, heads * head_dim
    x = _t(batch, seq, model)
    return (_mesh(mesh)
            + f"func @main(%x: {x}{s('data', None, None)},\n"
            + _attention_params(s, model, heads, head_dim) + ")\n"
            + f"    -> {x}{s('data', None, None)} {{\n"
            + _attention_body("%x", batch, seq, heads, head_dim)
            + "  return %r\n}\n")


def _layer_norm(src, n, batch, seq):
    """Layer norm of `src` over the model dim; the result is %h{n}."""
    stat = _t(batch, seq, 1)
    return (f"  %m{n} = reduce_mean {src} {{dims = [2], keep_dims = true}} : {stat}\n"
            f"  %c{n} = sub {src}, %m{n}\n"
            f"  %sq{n} = mul %c{n}, %c{n}\n"
            f"  %v{n} = reduce_mean %sq{n} {{dims = [2], keep_dims = true}} : {stat}\n"
            f"  %ve{n} = add %v{n}, %eps\n"
            f"  %rs{n} = rsqrt %ve{n}\n"
            f"  %n{n} = mul %c{n}, %rs{n}\n"
            f"  %s{n} = mul %n{n}, %g{n}\n"
            f"  %h{n} = add %s{n}, %b{n}\n")


def transformer(mesh, plan, batch, seq, heads, head_dim, hidden):
    """A pre-norm transformer layer (as examples/auto_transformer.shd):
    r = x + attention(ln(x)); out = r + relu(ln(r) W1) W2."""
    s, model = plan.sharding, heads * head_dim
    x = _t(batch, seq, model)
    vec = _t(model)
    return (_mesh(mesh)
            + f"func @main(%x: {x}{s('data', None, None)},\n"
            + f"           %g1: {vec}{s(None)}, %b1: {vec}{s(None)},\n"
            + _attention_params(s, model, heads, head_dim) + ",\n"
            + f"           %g2: {vec}{s(None)}, %b2: {vec}{s(None)},\n"
            + f"           %w1: {_t(model, hidden)}{s(None, 'model')},\n"
            + f"           %w2: {_t(hidden, model)}{s('model', None)})\n"
            + f"    -> {x}{s('data', None, None)} {{\n"
            + "  %eps = constant dense<1.0e-5> : tensor<f32>\n"
            + _layer_norm("%x", 1, batch, seq)
            + _attention_body("%h1", batch, seq, heads, head_dim)
            + _layer_norm("%r", 2, batch, seq)
            + f'  %u = einsum "bsm,mf->bsf" (%h2, %w1) : {_t(batch, seq, hidden)}\n'
            + "  %a = relu %u\n"
            + f'  %d = einsum "bsf,fm->bsm" (%a, %w2) : {x}\n'
            + "  %out = add %r, %d\n"
            + "  return %out\n}\n")


def weight_bytes(source):
    """The f32 bytes of every parameter but %x (the weights) in `source`."""
    total = 0
    for name, shape in re.findall(r"%(\w+): tensor<([0-9x]+)xf32>", source):
        if name != "x":
            n = 1
            for d in shape.split("x"):
                n *= int(d)
            total += 4 * n
    return total


def parameters(source):
    """(name, shape) of every f32 parameter of @main in `source`."""
    head = source[source.index("func @main("):source.index("->")]
    return [(name, [int(d) for d in shape.split("x")])
            for name, shape in re.findall(r"%(\w+): tensor<([0-9x]+)xf32>", head)]


def init_range(name, shape):
    """(low, high) of a parameter as a freshly initialized model has it: the
    activations %x in [-1, 1), weights in +-1/sqrt(fan_in) as torch.nn.Linear
    (fan_in: the dims a weight contracts, every dim but the last for %wo, the
    first for the others), layer-norm gains in [0.5, 1.5), biases in +-0.5.
    Unit-scale weights make attention scores reach the hundreds, and softmax's
    exp then underflows into denormals, a slow path no trained model takes."""
    if name.startswith("w"):
        fan_in = 1
        for d in (shape[:-1] if name == "wo" else shape[:1]):
            fan_in *= d
        bound = fan_in ** -0.5
        return -bound, bound
    if name.startswith("g"):
        return 0.5, 1.5
    if name.startswith("b"):
        return -0.5, 0.5
    return -1.0, 1.0
