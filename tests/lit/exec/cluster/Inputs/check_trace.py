#!/usr/bin/env python3
"""Checks a --trace file's structure (Chrome trace-event JSON): one process
track per rank with a name, complete events with the required fields, spans
nested properly on each rank, ops and collectives with their source line,
collectives with their bytes. Prints a one-line summary; exit 1 on a fault.

usage: check_trace.py FILE.json --ranks N [--runs K] [--count CAT:SOURCE=N]...
                      [--while CAT:COND=CAT:BODY]...
  --count CAT:SOURCE=N: every rank has exactly N events of category CAT (op,
      collective) whose source starts with SOURCE (op:jacobi.shd:30:=3 for
      an op inside a 3-trip for loop).
  --while A=B: every rank has as many A events as B events plus one, and
      some B events (a while loop's cond and body ops)."""
import argparse
import collections
import json
import re
import sys


def fail(message):
    print("check_trace: " + message, file=sys.stderr)
    sys.exit(1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("trace")
    parser.add_argument("--ranks", type=int, required=True)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--count", action="append", default=[])
    parser.add_argument("--while", dest="loops", action="append", default=[])
    args = parser.parse_args()
    with open(args.trace) as f:
        try:
            trace = json.load(f)
        except ValueError as e:
            fail("not valid JSON: %s" % e)
    events = trace.get("traceEvents")
    if not isinstance(events, list):
        fail("no traceEvents list")

    names = {e["pid"]: e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "process_name"}
    if sorted(names) != list(range(args.ranks)):
        fail("process_name metadata for pids %s, expected 0..%d" % (sorted(names), args.ranks - 1))
    spans = [e for e in events if e.get("ph") != "M"]
    per_rank = collections.defaultdict(list)
    source_pattern = re.compile(r"^[\w.\-]+\.shd:\d+:\d+$")
    collectives = 0
    for e in spans:
        if e.get("ph") != "X":
            fail("event of phase %r, expected X: %s" % (e.get("ph"), e))
        for field, kind in (("name", str), ("cat", str), ("pid", int), ("tid", int),
                            ("ts", (int, float)), ("dur", (int, float)), ("args", dict)):
            if not isinstance(e.get(field), kind):
                fail("event without a valid %s: %s" % (field, e))
        if e["ts"] < 0 or e["dur"] < 0:
            fail("negative time: %s" % e)
        if e["pid"] not in names:
            fail("event of unnamed pid %d" % e["pid"])
        if e["cat"] in ("op", "collective") and not source_pattern.match(e["args"].get("source", "")):
            fail("%s without a file:line:col source: %s" % (e["cat"], e))
        if e["cat"] == "collective":
            collectives += 1
            if not isinstance(e["args"].get("bytes"), int) or e["args"]["bytes"] < 0:
                fail("collective without its bytes: %s" % e)
        per_rank[(e["pid"], e["tid"])].append(e)
    if sorted(pid for pid, _ in per_rank) != list(range(args.ranks)):
        fail("events on pids %s, expected one track per rank" % sorted(per_rank))

    # Proper nesting: sorted by start (longest first on ties), every span
    # ends within the innermost open one that contains its start.
    for key, rank_spans in per_rank.items():
        stack = []
        for e in sorted(rank_spans, key=lambda e: (e["ts"], -e["dur"])):
            end = e["ts"] + e["dur"]
            while stack and stack[-1][0] <= e["ts"]:
                stack.pop()
            if stack and end > stack[-1][0] + 1e-9:
                fail("pid %d: %r [%s, %s] overlaps %r ending at %s" %
                     (key[0], e["name"], e["ts"], end, stack[-1][1], stack[-1][0]))
            stack.append((end, e["name"]))
        runs = sum(1 for e in rank_spans if e["cat"] == "phase" and e["name"] == "run")
        if runs != args.runs:
            fail("pid %d has %d run spans, expected %d" % (key[0], runs, args.runs))
        def count(what):
            category, _, prefix = what.partition(":")
            return sum(1 for e in rank_spans
                       if e["cat"] == category and e["args"].get("source", "").startswith(prefix))
        for wanted in args.count:
            what, _, expected = wanted.rpartition("=")
            if count(what) != int(expected):
                fail("pid %d has %d %s events, expected %s" % (key[0], count(what), what, expected))
        for loop in args.loops:
            cond, _, body = loop.partition("=")
            if count(body) < 1 or count(cond) != count(body) + 1:
                fail("pid %d has %d %s and %d %s events" % (key[0], count(cond), cond, count(body), body))
    print("trace ok: %d ranks, %d spans, %d collectives" % (args.ranks, len(spans), collectives))


if __name__ == "__main__":
    main()
