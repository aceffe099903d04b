/* Latency of the interposed collectives, OSU-style: for each collective and
 * size, warm-up calls, then timed calls between barriers; the figure is
 * the slowest rank's mean time per call. Run once as is and once with
 * libtopocoll_mpi.so preloaded to compare (scripts/pmpi-latency.sh).
 *
 *   latency [COLLECTIVE[,COLLECTIVE...]] [MAX_BYTES]
 *
 * Prints CSV: collective,size_bytes,us */

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double run(const char *coll, int n, char *a, char *b, int p)
{
    if (!strcmp(coll, "allreduce")) return MPI_Allreduce(a, b, n / 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (!strcmp(coll, "bcast")) return MPI_Bcast(a, n, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (!strcmp(coll, "reduce")) return MPI_Reduce(a, b, n / 8, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (!strcmp(coll, "allgather")) return MPI_Allgather(a, n, MPI_BYTE, b, n, MPI_BYTE, MPI_COMM_WORLD);
    if (!strcmp(coll, "alltoall")) return MPI_Alltoall(a, n, MPI_BYTE, b, n, MPI_BYTE, MPI_COMM_WORLD);
    if (!strcmp(coll, "reduce_scatter")) return MPI_Reduce_scatter_block(a, b, n / 8 / p, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (!strcmp(coll, "scatter")) return MPI_Scatter(a, n, MPI_BYTE, b, n, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (!strcmp(coll, "gather")) return MPI_Gather(a, n, MPI_BYTE, b, n, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (!strcmp(coll, "barrier")) return MPI_Barrier(MPI_COMM_WORLD);
    fprintf(stderr, "latency: unknown collective %s\n", coll);
    MPI_Abort(MPI_COMM_WORLD, 2);
    return 0;
}

int main(int argc, char **argv)
{
    int rank, p;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    char list[256] = "allreduce,bcast,reduce,allgather,alltoall,reduce_scatter,scatter,gather,barrier";
    if (argc > 1) snprintf(list, sizeof list, "%s", argv[1]);
    long max = argc > 2 ? atol(argv[2]) : 64L << 20;
    /* Block collectives move p blocks of the size through one buffer. */
    char *a = malloc((size_t)max * p), *b = malloc((size_t)max * p);
    memset(a, 1, (size_t)max * p);
    memset(b, 0, (size_t)max * p);
    if (rank == 0) printf("collective,size_bytes,us\n");
    for (char *coll = strtok(list, ","); coll; coll = strtok(NULL, ",")) {
        int block = !strcmp(coll, "allgather") || !strcmp(coll, "alltoall") ||
                    !strcmp(coll, "scatter") || !strcmp(coll, "gather");
        for (long n = 8; n <= max; n *= 4) {
            if (!strcmp(coll, "reduce_scatter") && n < 8L * p) continue;
            long bytes = block ? (n > max / p ? 0 : n) : n;
            if (!bytes) continue;
            int iters = n <= 8192 ? 200 : n <= (1 << 20) ? 40 : 6;
            for (int i = 0; i < iters / 4 + 2; i++) run(coll, (int)bytes, a, b, p);
            PMPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (int i = 0; i < iters; i++) run(coll, (int)bytes, a, b, p);
            double mine = (MPI_Wtime() - t0) / iters, worst;
            PMPI_Reduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            if (rank == 0) printf("%s,%ld,%.2f\n", coll, bytes, worst * 1e6);
            if (!strcmp(coll, "barrier")) break;
        }
    }
    free(a); free(b);
    MPI_Finalize();
    return 0;
}
