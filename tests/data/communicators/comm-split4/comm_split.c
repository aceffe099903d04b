/* Collectives and messages on sub-communicators: the world split into two
 * halves by parity (keys reversing each half), a duplicate of the world. */
#include <mpi.h>

static double buf[131072];

int main(int argc, char **argv)
{
  int rank, size, half_rank;
  MPI_Comm half, dup;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half);
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_rank(half, &half_rank);
  MPI_Bcast(buf, 100000, MPI_DOUBLE, 0, half);
  MPI_Allreduce(MPI_IN_PLACE, buf, 20000, MPI_DOUBLE, MPI_SUM, half);
  MPI_Bcast(buf, 50000, MPI_DOUBLE, 1, dup);
  /* Half rank 0 sends to half rank 1 on the half; the same tag on the world. */
  if (half_rank == 0)
    MPI_Send(buf, 10000, MPI_DOUBLE, 1, 7, half);
  else if (half_rank == 1)
    MPI_Recv(buf, 10000, MPI_DOUBLE, 0, 7, half, MPI_STATUS_IGNORE);
  MPI_Barrier(half);
  MPI_Comm_free(&half);
  MPI_Comm_free(&dup);
  MPI_Finalize();
  return 0;
}
