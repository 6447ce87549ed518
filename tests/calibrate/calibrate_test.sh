#!/bin/sh
# shardc-calibrate on 2 ranks at tiny sizes, then shardc --auto-shard with the
# model it wrote; on 4 ranks sharing one core, the latencies a program sees;
# bad arguments exit 2 with a clear message.
# Usage: calibrate_test.sh CALIBRATE SHARDC PROGRAM.shd WORKDIR
set -eu
calibrate=$1 shardc=$2 program=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
mpiexec.mpich -n 2 "$calibrate" --mesh '<["x"=2]>' --quick -o "$work/model.json" > "$work/out.txt"
grep -q 'axis x (2 ranks): all_to_all' "$work/out.txt"
grep -q '"axes"' "$work/model.json"
grep -q '"x"' "$work/model.json"
grep -q '"gemm_bandwidth"' "$work/model.json"
grep -q '"all_reduce"' "$work/model.json"
# Four ranks on one core: the axes are timed on the runtime's collectives,
# which give the core up while they wait; blocking MPI calls spin away a time
# slice per message there (16 ms each on this machine, every one of the 8),
# which a program never sees. The second smallest (axis, kind) latency must
# be far below a time slice (on a loaded machine other processes' slices
# land in some of them).
taskset -c 0 mpiexec.mpich -n 4 "$calibrate" --mesh '<["x"=2, "y"=2]>' --quick \
  -o "$work/model4.json" > "$work/out4.txt"
latencies=$(sed -n 's/.* latency \([0-9.]*\) us.*/\1/p' "$work/out4.txt" | sort -n)
[ "$(echo "$latencies" | wc -l)" -eq 8 ] || { echo "not 8 latencies:"; cat "$work/out4.txt"; exit 1; }
second=$(echo "$latencies" | sed -n 2p)
awk -v m="$second" 'BEGIN { exit !(m < 1000) }' || {
  echo "second smallest latency $second us on one core: a blocking wait spun a time slice"
  cat "$work/out4.txt"
  exit 1
}
"$shardc" "$program" --auto-shard --cost-model "$work/model.json" --emit=sharded -o "$work/p.shd"
grep -q 'sharding<' "$work/p.shd"

expect_exit2() { # message, then the command
  message=$1
  shift
  if "$@" > "$work/err.txt" 2>&1; then
    echo "expected exit 2: $*"
    exit 1
  else
    status=$?
  fi
  [ "$status" -eq 2 ] || { echo "exit $status, not 2: $*"; cat "$work/err.txt"; exit 1; }
  grep -q "$message" "$work/err.txt" || { echo "no '$message':"; cat "$work/err.txt"; exit 1; }
}
expect_exit2 'the mesh has 4 devices but mpiexec started 2 ranks' \
  mpiexec.mpich -n 2 "$calibrate" --mesh '<["x"=2, "y"=2]>' -o "$work/bad.json"
expect_exit2 'not a mesh' mpiexec.mpich -n 2 "$calibrate" --mesh '<["x"=2' -o "$work/bad.json"
expect_exit2 'usage' mpiexec.mpich -n 1 "$calibrate" --mesh '<["x"=1]>'
echo "ok"
