/* Timing for the MPI peers, the way the shardc runtime times a run: all ranks
 * leave a barrier together, each times its own work, and the run's time is the
 * slowest rank's, printed by rank 0. */
#ifndef SHARDC_BENCH_PEERS_MPI_TIMING_H
#define SHARDC_BENCH_PEERS_MPI_TIMING_H

#include <mpi.h>
#include <stdio.h>

static inline double peer_run_start(void) {
  MPI_Barrier(MPI_COMM_WORLD);
  return MPI_Wtime();
}

static inline void peer_run_end(double start) {
  double mine = MPI_Wtime() - start, slowest = 0;
  int rank = 0;
  MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    printf("time %.9f\n", slowest);
    fflush(stdout);
  }
}

#endif
