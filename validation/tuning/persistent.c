/* Do persistent requests make a small collective faster on this machine?
 *
 * An 8-byte recursive-doubling allreduce (a power-of-two number of ranks),
 * written three ways and timed in one run, alternating rounds of each:
 *   isend       MPI_Irecv + MPI_Isend + MPI_Waitall each step (what the mpi
 *               backend does per message);
 *   persistent  MPI_Recv_init / MPI_Send_init once, MPI_Startall +
 *               MPI_Waitall each step (MPI_Allreduce_init-style reuse);
 *   native      MPI_Allreduce.
 * Prints each one's median time per allreduce over the rounds (microseconds,
 * the slowest rank's).
 *
 *   mpicc -O2 persistent.c -o persistent && mpirun -np 4 ./persistent
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { ITERS = 2000, ROUNDS = 15, MAX_STEPS = 16 };

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size & (size - 1)) {
    if (rank == 0) fprintf(stderr, "persistent: needs a power-of-two number of ranks\n");
    MPI_Finalize();
    return 2;
  }
  int steps = 0;
  while ((1 << steps) < size) steps++;
  double mine = rank + 1, acc, in[MAX_STEPS];
  MPI_Request pers[2 * MAX_STEPS];
  for (int s = 0; s < steps; s++) {
    int peer = rank ^ (1 << s);
    MPI_Recv_init(&in[s], 1, MPI_DOUBLE, peer, s, MPI_COMM_WORLD, &pers[2 * s]);
    MPI_Send_init(&acc, 1, MPI_DOUBLE, peer, s, MPI_COMM_WORLD, &pers[2 * s + 1]);
  }
  double t[3][ROUNDS];
  const char *name[3] = {"isend", "persistent", "native"};
  for (int round = 0; round < ROUNDS; round++) {
    for (int way = 0; way < 3; way++) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      for (int i = 0; i < ITERS; i++) {
        acc = mine;
        if (way == 2) {
          double out;
          MPI_Allreduce(&acc, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
          acc = out;
          continue;
        }
        for (int s = 0; s < steps; s++) {
          int peer = rank ^ (1 << s);
          if (way == 0) {
            MPI_Request r[2];
            MPI_Irecv(&in[s], 1, MPI_DOUBLE, peer, s, MPI_COMM_WORLD, &r[0]);
            MPI_Isend(&acc, 1, MPI_DOUBLE, peer, s, MPI_COMM_WORLD, &r[1]);
            MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
          } else {
            MPI_Startall(2, &pers[2 * s]);
            MPI_Waitall(2, &pers[2 * s], MPI_STATUSES_IGNORE);
          }
          acc += in[s];
        }
      }
      double dt = (MPI_Wtime() - t0) / ITERS, slowest;
      MPI_Reduce(&dt, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
      t[way][round] = slowest;
      if (acc != size * (size + 1) / 2.0) {
        fprintf(stderr, "persistent: rank %d: %s gave %g\n", rank, name[way], acc);
        MPI_Abort(MPI_COMM_WORLD, 2);
      }
    }
  }
  if (rank == 0) {
    for (int way = 0; way < 3; way++) {
      qsort(t[way], ROUNDS, sizeof(double), cmp);
      printf("%-10s %.3f us\n", name[way], t[way][ROUNDS / 2] * 1e6);
    }
  }
  for (int s = 0; s < 2 * steps; s++) MPI_Request_free(&pers[s]);
  MPI_Finalize();
  return 0;
}
