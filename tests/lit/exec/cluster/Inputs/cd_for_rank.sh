#!/bin/sh
# cd_for_rank.sh RANK DIR PROG ARGS...: rank RANK of the launch runs in DIR,
# every other rank where it was started: relative input paths then name
# files that exist on every rank but RANK, like a node that lacks a mount.
rank=${PMI_RANK:-$OMPI_COMM_WORLD_RANK}
if [ "$rank" = "$1" ]; then
  cd "$2" || exit 1
fi
shift 2
exec "$@"
