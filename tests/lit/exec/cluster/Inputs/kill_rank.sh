#!/bin/sh
# kill_rank.sh RANK SIGNAL PROG ARGS...: runs PROG ARGS as every rank of a
# launch (MPICH's PMI_RANK or Open MPI's OMPI_COMM_WORLD_RANK); on rank RANK a
# separate process sends SIGNAL to it once the runtime has installed its
# handlers (SIGTERM caught, /proc/PID/status), as a batch system or an
# operator would. Exit status: PROG's.
rank=${PMI_RANK:-$OMPI_COMM_WORLD_RANK}
target=$1 signal=$2
shift 2
if [ "$rank" = "$target" ]; then
  (
    pid=$$ # the shell, which exec turns into PROG
    for i in $(seq 600); do
      caught=$(sed -n 's/^SigCgt:[[:space:]]*//p' /proc/$pid/status 2>/dev/null)
      [ -n "$caught" ] && [ $((0x$caught & 0x4000)) -ne 0 ] && break
      sleep 0.05
    done
    sleep 0.5
    kill -s "$signal" "$pid"
  ) &
fi
exec "$@"
