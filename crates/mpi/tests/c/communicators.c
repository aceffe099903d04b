/* Collectives on many communicators at once: the world split into halves
 * and into thirds, a duplicate, MPI_COMM_SELF, and a communicator freed and
 * made again, with point-to-point traffic of the application's own left
 * pending across the collectives (a wildcard receive that a schedule's
 * messages must never match). Each result is checked against the MPI
 * library's own collective. Exits 1 on any mismatch. */

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

static void check(const char *what, MPI_Comm comm, const double *a, const double *b, int n)
{
    int me;
    MPI_Comm_rank(comm, &me);
    if (memcmp(a, b, n * sizeof(double)) != 0) {
        failures++;
        printf("MISMATCH %s (rank %d of its communicator)\n", what, me);
    }
}

static void exercise(const char *name, MPI_Comm comm)
{
    int p, me;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    int n = 777;
    double *in = malloc(n * p * sizeof(double)), *a = malloc(n * p * sizeof(double)),
           *b = malloc(n * p * sizeof(double));
    for (int i = 0; i < n * p; i++)
        in[i] = (double)((i * 3 + me * 7) % 17);
    char what[128];
    snprintf(what, sizeof what, "%s allreduce", name);
    MPI_Allreduce(in, a, n, MPI_DOUBLE, MPI_SUM, comm);
    PMPI_Allreduce(in, b, n, MPI_DOUBLE, MPI_SUM, comm);
    check(what, comm, a, b, n);
    snprintf(what, sizeof what, "%s bcast", name);
    memcpy(a, in, n * sizeof(double));
    memcpy(b, in, n * sizeof(double));
    MPI_Bcast(a, n, MPI_DOUBLE, p - 1, comm);
    PMPI_Bcast(b, n, MPI_DOUBLE, p - 1, comm);
    check(what, comm, a, b, n);
    snprintf(what, sizeof what, "%s alltoall", name);
    MPI_Alltoall(in, n, MPI_DOUBLE, a, n, MPI_DOUBLE, comm);
    PMPI_Alltoall(in, n, MPI_DOUBLE, b, n, MPI_DOUBLE, comm);
    check(what, comm, a, b, n * p);
    snprintf(what, sizeof what, "%s allgather", name);
    MPI_Allgather(in, n, MPI_DOUBLE, a, n, MPI_DOUBLE, comm);
    PMPI_Allgather(in, n, MPI_DOUBLE, b, n, MPI_DOUBLE, comm);
    check(what, comm, a, b, n * p);
    MPI_Barrier(comm);
    free(in); free(a); free(b);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* The application's own wildcard receive, pending through every
     * collective below; the matching send comes last. */
    int token = -1;
    MPI_Request pending;
    MPI_Irecv(&token, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &pending);

    exercise("world", MPI_COMM_WORLD);
    MPI_Comm half, third, dup;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half); /* reversed order */
    MPI_Comm_split(MPI_COMM_WORLD, rank % 3, rank, &third);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    exercise("half", half);
    exercise("third", third);
    exercise("dup", dup);
    exercise("self", MPI_COMM_SELF);
    exercise("half again", half);
    MPI_Comm_free(&half);
    MPI_Comm_split(MPI_COMM_WORLD, rank < size / 2, rank, &half);
    exercise("half remade", half);
    MPI_Comm_free(&half);
    MPI_Comm_free(&third);
    MPI_Comm_free(&dup);

    /* Each rank sends its successor the token the pending receive waits for. */
    int out = rank;
    MPI_Send(&out, 1, MPI_INT, (rank + 1) % size, 99, MPI_COMM_WORLD);
    MPI_Status st;
    MPI_Wait(&pending, &st);
    if (token != (rank + size - 1) % size || st.MPI_TAG != 99) {
        failures++;
        printf("MISMATCH the application's own receive got %d tag %d\n", token, st.MPI_TAG);
    }
    int all = 0;
    PMPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("communicators on %d ranks: %d mismatches\n", size, all);
    MPI_Finalize();
    return all ? 1 : 0;
}
