#!/usr/bin/env python3
"""Mutation fuzzing of the whole compiler (stdlib only).

Takes the programs under tests/lit and examples/, changes each a little (a line
dropped, doubled or swapped, a number, an axis name, an op or a dtype changed, a
span cut, a token inserted), compiles the result in one of several modes and
reports every run that does not end as the contract says: exit 0 or 1 within the
time limit (2 is bad usage, which these command lines never are; anything else is
a crash or an internal error). Each such program is kept for replay.

    scripts/mutation_fuzz.py --shardc build/tools/shardc/shardc --seed 1 --count 2000

The libFuzzer target (tests/fuzz) covers the parser alone; this covers every pass
after it on inputs close to real programs. docs/testing.md says more.
"""
import argparse
import glob
import os
import random
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TOKENS = ['?', '{', '}', '[', ']', ',', '%v1', '"x"', 'sharding<@mesh, [{"x"}]>', 'p0', ':',
          'tensor<4xf32>', '(', ')', 'return', '0.5', '-', 'dense<1>', '@main']
NUMBERS = ['0', '1', '-1', '2', '3', '7', '64', '1000000', '99999999999999999999']
SWAPS = [('f32', 'i1'), ('f32', 'i64'), ('add', 'matmul'), ('matmul', 'einsum'),
         ('tanh', 'reshape'), ('dim = 0', 'dim = 5'), ('{"x"}', '{"x", "x"}'), ('{}', '{"y"}'),
         ('"x"=2', '"x"=0')]
MODES = [['--emit=spmd'], ['--emit=sharded'], ['--explicit', '--emit=spmd'],
         ['--auto-shard', '--emit=spmd'], ['--verify-only'], ['--report=collectives']]


def mutate(rng, text):
    lines = text.split('\n')
    kind = rng.randrange(8)
    if kind == 0 and lines:
        del lines[rng.randrange(len(lines))]
    elif kind == 1 and lines:
        i = rng.randrange(len(lines))
        lines.insert(i, lines[i])
    elif kind == 2:
        numbers = list(re.finditer(r'\b\d+\b', text))
        if numbers:
            m = rng.choice(numbers)
            return text[:m.start()] + rng.choice(NUMBERS) + text[m.end():]
    elif kind == 3:
        return text.replace('"x"', '"q"', 1) if rng.random() < 0.5 else text.replace('"y"', '"x"', 1)
    elif kind == 4 and len(text) > 10:
        i = rng.randrange(len(text))
        return text[:i] + text[i + rng.randrange(1, 30):]
    elif kind == 5 and len(lines) > 2:
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == 6:
        i = rng.randrange(len(text) + 1)
        return text[:i] + rng.choice(TOKENS) + text[i:]
    elif kind == 7:
        old, new = rng.choice(SWAPS)
        places = [m.start() for m in re.finditer(re.escape(old), text)]
        if places:
            i = rng.choice(places)
            return text[:i] + new + text[i + len(old):]
    return '\n'.join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--shardc', default=os.path.join(ROOT, 'build/tools/shardc/shardc'))
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--count', type=int, default=1000, help='programs to try')
    parser.add_argument('--timeout', type=float, default=60, help='seconds per run')
    parser.add_argument('--out', default='/tmp/shardc-mutation-fuzz',
                        help='where failing programs are kept')
    args = parser.parse_args()
    if not os.access(args.shardc, os.X_OK):
        sys.exit(f'mutation_fuzz: no shardc at {args.shardc} (build first, or pass --shardc)')
    sources = [open(f).read() for f in sorted(
        glob.glob(os.path.join(ROOT, 'tests/lit/**/*.shd'), recursive=True)
        + glob.glob(os.path.join(ROOT, 'examples/*.shd')))]
    os.makedirs(args.out, exist_ok=True)
    rng = random.Random(args.seed)
    current = os.path.join(args.out, f'current-{os.getpid()}.shd')
    bad = 0
    for n in range(args.count):
        text = rng.choice(sources)
        for _ in range(rng.randrange(1, 4)):
            text = mutate(rng, text)
        mode = rng.choice(MODES)
        with open(current, 'w') as f:
            f.write(text)
        try:
            run = subprocess.run([args.shardc, current] + mode + ['-o', os.devnull],
                                 capture_output=True, timeout=args.timeout)
            status, err = run.returncode, run.stderr.decode(errors='replace')
        except subprocess.TimeoutExpired:
            status, err = 'timeout', ''
        if status not in (0, 1):
            bad += 1
            kept = os.path.join(args.out, f'seed{args.seed}-{n}.shd')
            with open(kept, 'w') as f:
                f.write(text)
            last = err.strip().splitlines()[-1:] or ['']
            print(f'{kept}: {" ".join(mode)}: exit {status}: {last[0]}', flush=True)
    os.remove(current)
    print(f'mutation_fuzz: {args.count} programs, {bad} not ending in exit 0 or 1')
    sys.exit(1 if bad else 0)


if __name__ == '__main__':
    main()
