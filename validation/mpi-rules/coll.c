/* coll COLLECTIVE BYTES: one call of the MPI collective with topocoll's
 * --size BYTES (the buffer for allreduce, bcast, reduce and reduce_scatter;
 * the block per rank for allgather and alltoall), f64 sums where it
 * reduces, checked. Exit 1 on a wrong result. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, p, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    if (argc != 3) {
        if (rank == 0) fprintf(stderr, "usage: coll COLLECTIVE BYTES\n");
        MPI_Finalize();
        return 2;
    }
    const char *c = argv[1];
    long bytes = atol(argv[2]);
    long n = bytes / 8; /* f64 elements */
    char *a = calloc(bytes * p + 8, 1), *b = calloc(bytes * p + 8, 1);
    double *x = (double *)a, *y = (double *)b;
    if (!strcmp(c, "allreduce") || !strcmp(c, "reduce") || !strcmp(c, "reduce_scatter")) {
        for (long i = 0; i < n; i++) x[i] = rank + 1;
        double want = p * (p + 1) / 2.0;
        if (!strcmp(c, "allreduce")) {
            MPI_Allreduce(x, y, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            bad = n > 0 && y[n - 1] != want;
        } else if (!strcmp(c, "reduce")) {
            MPI_Reduce(x, y, n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
            bad = rank == 0 && n > 0 && y[n - 1] != want;
        } else {
            MPI_Reduce_scatter_block(x, y, n / p, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            bad = n / p > 0 && y[n / p - 1] != want;
        }
    } else if (!strcmp(c, "bcast")) {
        if (rank == 0) memset(a, 7, bytes);
        MPI_Bcast(a, bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
        bad = bytes > 0 && a[bytes - 1] != 7;
    } else if (!strcmp(c, "allgather")) {
        memset(a, rank + 1, bytes);
        MPI_Allgather(a, bytes, MPI_BYTE, b, bytes, MPI_BYTE, MPI_COMM_WORLD);
        bad = bytes > 0 && b[bytes * p - 1] != p;
    } else if (!strcmp(c, "alltoall")) {
        for (long i = 0; i < bytes * p; i++) a[i] = (char)(i / bytes);
        MPI_Alltoall(a, bytes, MPI_BYTE, b, bytes, MPI_BYTE, MPI_COMM_WORLD);
        bad = bytes > 0 && b[bytes * p - 1] != rank;
    } else {
        if (rank == 0) fprintf(stderr, "coll: unknown collective '%s'\n", c);
        MPI_Finalize();
        return 2;
    }
    if (bad) fprintf(stderr, "rank %d: wrong result\n", rank);
    free(a);
    free(b);
    MPI_Finalize();
    return bad;
}
