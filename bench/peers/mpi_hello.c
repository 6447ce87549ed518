/* The least an MPI program does: MPI_Init and MPI_Finalize. Its start-up under
 * mpiexec is the floor for any MPI executable, shardc's included.
 *   mpiexec -n R bench-mpi-hello */
#include <mpi.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Finalize();
  return 0;
}
