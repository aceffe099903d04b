#include <mpi.h>
int main(int argc, char **argv)
{
  int rank, size;
  MPI_Comm half, dup;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half);
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Finalize();
  return 0;
}
