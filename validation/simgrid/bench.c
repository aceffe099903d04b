/* One collective, called right after MPI_Init, timed in simulated seconds.
 *
 *   bench alltoall|allreduce|bcast BYTES
 *
 * alltoall: BYTES per peer (MPI_BYTE); allreduce: BYTES of MPI_DOUBLE summed;
 * bcast: BYTES (MPI_BYTE) from root 0. The algorithm is SimGrid's choice from
 * --cfg=smpi/<collective>:<algorithm>.
 *
 * Every rank starts the collective at simulated time 0 (MPI_Init takes no
 * simulated time: smpi/init defaults to 0) and prints
 *   TIME rank start end
 * with end = MPI_Wtime() right after the collective returns. The collective's
 * time is the largest end over the ranks (validation/simgrid/run.sh takes it).
 * Run with --cfg=smpi/simulate-computation:no (the host code between MPI calls
 * must not be charged) and --cfg=smpi/wtime:0 (MPI_Wtime injects 10 ns by
 * default, which would delay the collective's start).
 *
 * Buffers come from SMPI_SHARED_MALLOC under SMPI: 1,024 ranks x 2 x 64 MiB of
 * private buffers would not fit in memory; the contents do not matter for
 * the timing.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef SMPI_SHARED_MALLOC
#define BUF_ALLOC(n) SMPI_SHARED_MALLOC(n)
#define BUF_FREE(p) SMPI_SHARED_FREE(p)
#else
#define BUF_ALLOC(n) malloc(n)
#define BUF_FREE(p) free(p)
#endif

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  double start = MPI_Wtime();
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 3) {
    if (rank == 0)
      fprintf(stderr, "usage: %s alltoall|allreduce|bcast BYTES\n", argv[0]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const char *coll = argv[1];
  long bytes = atol(argv[2]);
  if (bytes <= 0) {
    if (rank == 0)
      fprintf(stderr, "BYTES must be positive, got '%s'\n", argv[2]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }

  if (strcmp(coll, "alltoall") == 0) {
    size_t total = (size_t)bytes * (size_t)size;
    char *sbuf = BUF_ALLOC(total);
    char *rbuf = BUF_ALLOC(total);
    start = MPI_Wtime();
    MPI_Alltoall(sbuf, (int)bytes, MPI_BYTE, rbuf, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
    double end = MPI_Wtime();
    printf("TIME %d %.12e %.12e\n", rank, start, end);
    BUF_FREE(sbuf);
    BUF_FREE(rbuf);
  } else if (strcmp(coll, "allreduce") == 0) {
    if (bytes % sizeof(double) != 0) {
      if (rank == 0)
        fprintf(stderr, "allreduce: BYTES must be a multiple of 8 (doubles)\n");
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int count = (int)(bytes / (long)sizeof(double));
    double *sbuf = BUF_ALLOC((size_t)bytes);
    double *rbuf = BUF_ALLOC((size_t)bytes);
    start = MPI_Wtime();
    MPI_Allreduce(sbuf, rbuf, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double end = MPI_Wtime();
    printf("TIME %d %.12e %.12e\n", rank, start, end);
    BUF_FREE(sbuf);
    BUF_FREE(rbuf);
  } else if (strcmp(coll, "bcast") == 0) {
    char *buf = BUF_ALLOC((size_t)bytes);
    start = MPI_Wtime();
    MPI_Bcast(buf, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
    double end = MPI_Wtime();
    printf("TIME %d %.12e %.12e\n", rank, start, end);
    BUF_FREE(buf);
  } else {
    if (rank == 0)
      fprintf(stderr, "unknown collective '%s'\n", coll);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Finalize();
  return 0;
}
