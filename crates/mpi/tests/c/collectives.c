/* Every interposed collective, with every predefined type and operator the
 * standard defines on it, in place and not, at several counts and roots,
 * each checked against the MPI library's own collective (PMPI_*) on the same
 * inputs. Run with libtopocoll_mpi.so preloaded (scripts/mpi-tests.sh).
 *
 *   collectives [COLLECTIVE]    only that collective (topocoll's name)
 *
 * Values are small integers (and, for floating products, powers of two), so
 * that every result is exact whatever the order of combination: results are
 * compared bit for bit. Prints one line per mismatch and a summary; exits 1
 * on any mismatch. */

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, failures, checks;
static const char *only;

/* Integer, floating, logical and byte types, as MPI's reduction table sorts them. */
enum cls { INTEGER, FLOATING, LOGICAL, BYTE };
struct type {
    MPI_Datatype t;
    const char *name;
    enum cls cls;
    int is_signed;
};
static struct type types[] = {
    {MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", INTEGER, 1},
    {MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", INTEGER, 0},
    {MPI_SHORT, "MPI_SHORT", INTEGER, 1},
    {MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", INTEGER, 0},
    {MPI_INT, "MPI_INT", INTEGER, 1},
    {MPI_UNSIGNED, "MPI_UNSIGNED", INTEGER, 0},
    {MPI_LONG, "MPI_LONG", INTEGER, 1},
    {MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", INTEGER, 0},
    {MPI_LONG_LONG, "MPI_LONG_LONG", INTEGER, 1},
    {MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", INTEGER, 0},
    {MPI_INT8_T, "MPI_INT8_T", INTEGER, 1},
    {MPI_INT16_T, "MPI_INT16_T", INTEGER, 1},
    {MPI_INT32_T, "MPI_INT32_T", INTEGER, 1},
    {MPI_INT64_T, "MPI_INT64_T", INTEGER, 1},
    {MPI_UINT8_T, "MPI_UINT8_T", INTEGER, 0},
    {MPI_UINT16_T, "MPI_UINT16_T", INTEGER, 0},
    {MPI_UINT32_T, "MPI_UINT32_T", INTEGER, 0},
    {MPI_UINT64_T, "MPI_UINT64_T", INTEGER, 0},
    {MPI_AINT, "MPI_AINT", INTEGER, 1},
    {MPI_FLOAT, "MPI_FLOAT", FLOATING, 1},
    {MPI_DOUBLE, "MPI_DOUBLE", FLOATING, 1},
    {MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", FLOATING, 1},
    {MPI_C_BOOL, "MPI_C_BOOL", LOGICAL, 0},
    {MPI_BYTE, "MPI_BYTE", BYTE, 0},
    {MPI_CHAR, "MPI_CHAR", BYTE, 0}, /* moved only: MPI defines no operator on it */
};
#define NTYPES ((int)(sizeof types / sizeof types[0]))

struct op {
    MPI_Op op;
    const char *name;
};
static struct op ops[] = {
    {MPI_SUM, "MPI_SUM"}, {MPI_PROD, "MPI_PROD"}, {MPI_MIN, "MPI_MIN"},
    {MPI_MAX, "MPI_MAX"}, {MPI_LAND, "MPI_LAND"}, {MPI_LOR, "MPI_LOR"},
    {MPI_LXOR, "MPI_LXOR"}, {MPI_BAND, "MPI_BAND"}, {MPI_BOR, "MPI_BOR"},
    {MPI_BXOR, "MPI_BXOR"},
};
#define NOPS ((int)(sizeof ops / sizeof ops[0]))

static int op_applies(const struct type *t, int o)
{
    MPI_Op op = ops[o].op;
    int arith = op == MPI_SUM || op == MPI_PROD || op == MPI_MIN || op == MPI_MAX;
    int logical = op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR;
    switch (t->cls) {
    case INTEGER: return 1;
    case FLOATING: return arith;
    case LOGICAL: return logical;
    case BYTE: return t->t == MPI_BYTE && !arith && !logical;
    }
    return 0;
}

static int wants(const char *coll)
{
    return !only || strcmp(only, coll) == 0;
}

/* Element i of rank r's data for operator `op` (small, so results are exact). */
static void fill(const struct type *t, MPI_Op op, void *buf, int n, int r, int salt)
{
    int ts;
    MPI_Type_size(t->t, &ts);
    for (int i = 0; i < n; i++) {
        long v = (long)((i * 7 + r * 13 + salt * 5) % 11) - (t->is_signed ? 5 : 0);
        if (op == MPI_PROD)
            v = ((i + r + salt) % 5 == 0) ? 2 : 1; /* products stay small */
        if (t->cls == LOGICAL)
            v = ((i + r * 3 + salt) % 3) == 0;
        char *p = (char *)buf + (size_t)i * ts;
        if (t->t == MPI_FLOAT) { float x = (float)v; if (op == MPI_PROD && v == 1 && (i + r) % 3 == 0) x = 0.5f; memcpy(p, &x, 4); }
        else if (t->t == MPI_DOUBLE) { double x = (double)v; if (op == MPI_PROD && v == 1 && (i + r) % 3 == 0) x = 0.5; memcpy(p, &x, 8); }
        else if (t->t == MPI_LONG_DOUBLE) { long double x = (long double)v; memset(p, 0, ts); memcpy(p, &x, sizeof x < (size_t)ts ? sizeof x : (size_t)ts); }
        else if (t->cls == LOGICAL) { _Bool x = v != 0; memcpy(p, &x, 1); }
        else {
            /* Integers: little-endian two's complement of v, sign-extended. */
            for (int b = 0; b < ts; b++)
                p[b] = (char)((unsigned long)v >> (8 * (b < 8 ? b : 7)));
        }
    }
}

/* Compares the significant bytes of two results (long double's padding aside). */
static void compare(const char *what, const struct type *t, const void *a, const void *b, int n)
{
    int ts;
    MPI_Type_size(t->t, &ts);
    int sig = t->t == MPI_LONG_DOUBLE ? 10 : ts;
    checks++;
    for (int i = 0; i < n; i++) {
        if (memcmp((const char *)a + (size_t)i * ts, (const char *)b + (size_t)i * ts, sig) != 0) {
            failures++;
            printf("MISMATCH rank %d of %d: %s %s element %d of %d\n", rank, size, what, t->name, i, n);
            return;
        }
    }
}

static void *alloc(size_t bytes)
{
    void *p = calloc(bytes ? bytes : 1, 1);
    if (!p) { fprintf(stderr, "out of memory\n"); MPI_Abort(MPI_COMM_WORLD, 3); }
    return p;
}

static const int counts[] = {1, 5, 1031, 20000};
#define NCOUNTS ((int)(sizeof counts / sizeof counts[0]))

static void reductions(MPI_Comm comm)
{
    int p, me;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    for (int ti = 0; ti < NTYPES; ti++) {
        const struct type *t = &types[ti];
        int ts;
        MPI_Type_size(t->t, &ts);
        for (int o = 0; o < NOPS; o++) {
            if (!op_applies(t, o))
                continue;
            MPI_Op op = ops[o].op;
            for (int ci = 0; ci < NCOUNTS; ci++) {
                int n = counts[ci];
                if (n > 1031 && !(t->t == MPI_DOUBLE || t->t == MPI_INT) )
                    continue;
                size_t bytes = (size_t)n * ts;
                char *in = alloc(bytes * p), *a = alloc(bytes * p), *b = alloc(bytes * p);
                char what[160];
                fill(t, op, in, n * p, me, ci);
                if (wants("allreduce")) {
                    snprintf(what, sizeof what, "allreduce %s n=%d", ops[o].name, n);
                    MPI_Allreduce(in, a, n, t->t, op, comm);
                    PMPI_Allreduce(in, b, n, t->t, op, comm);
                    compare(what, t, a, b, n);
                    memcpy(a, in, bytes);
                    MPI_Allreduce(MPI_IN_PLACE, a, n, t->t, op, comm);
                    compare(what, t, a, b, n);
                }
                if (wants("reduce")) {
                    for (int root = 0; root < p; root += (p > 2 ? p - 1 : 1)) {
                        snprintf(what, sizeof what, "reduce %s n=%d root=%d", ops[o].name, n, root);
                        memset(a, 0, bytes);
                        memset(b, 0, bytes);
                        MPI_Reduce(in, a, n, t->t, op, root, comm);
                        PMPI_Reduce(in, b, n, t->t, op, root, comm);
                        if (me == root)
                            compare(what, t, a, b, n);
#ifdef MPICH_VERSION
                        /* MPICH 4.0 itself (PMPI_Reduce, no library preloaded)
                         * crashes on an in-place reduce at a root other than 0
                         * past 1,024 elements: the library's fallbacks would. */
                        if (root != 0 && n > 1024)
                            continue;
#endif
                        memcpy(a, in, bytes);
                        /* A non-root's receive buffer is insignificant; MPICH 4.0
                         * writes to it at some sizes, so it is a real one. */
                        MPI_Reduce(me == root ? MPI_IN_PLACE : in, me == root ? a : b, n, t->t, op, root, comm);
                        if (me == root)
                            compare(what, t, a, b, n);
                    }
                }
                if (wants("reduce_scatter")) {
                    snprintf(what, sizeof what, "reduce_scatter_block %s n=%d", ops[o].name, n);
                    MPI_Reduce_scatter_block(in, a, n, t->t, op, comm);
                    PMPI_Reduce_scatter_block(in, b, n, t->t, op, comm);
                    compare(what, t, a, b, n);
                    memcpy(a, in, bytes * p);
                    MPI_Reduce_scatter_block(MPI_IN_PLACE, a, n, t->t, op, comm);
                    compare(what, t, a, b, n);
                }
                if (wants("scan")) {
                    snprintf(what, sizeof what, "scan %s n=%d", ops[o].name, n);
                    MPI_Scan(in, a, n, t->t, op, comm);
                    PMPI_Scan(in, b, n, t->t, op, comm);
                    compare(what, t, a, b, n);
                    memcpy(a, in, bytes);
                    MPI_Scan(MPI_IN_PLACE, a, n, t->t, op, comm);
                    compare(what, t, a, b, n);
                }
                if (wants("exscan")) {
                    snprintf(what, sizeof what, "exscan %s n=%d", ops[o].name, n);
                    MPI_Exscan(in, a, n, t->t, op, comm);
                    PMPI_Exscan(in, b, n, t->t, op, comm);
                    if (me > 0)
                        compare(what, t, a, b, n);
                    memcpy(a, in, bytes);
                    MPI_Exscan(MPI_IN_PLACE, a, n, t->t, op, comm);
                    if (me > 0)
                        compare(what, t, a, b, n);
                }
                free(in); free(a); free(b);
            }
        }
    }
}

static void movement(MPI_Comm comm)
{
    int p, me;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    for (int ti = 0; ti < NTYPES; ti++) {
        const struct type *t = &types[ti];
        int ts;
        MPI_Type_size(t->t, &ts);
        for (int ci = 0; ci < NCOUNTS; ci++) {
            int n = counts[ci];
            if (n > 1031 && t->t != MPI_DOUBLE)
                continue;
            size_t bytes = (size_t)n * ts;
            char *in = alloc(bytes * p), *a = alloc(bytes * p), *b = alloc(bytes * p);
            char what[160];
            fill(t, MPI_SUM, in, n * p, me, ci);
            if (wants("bcast")) {
                for (int root = 0; root < p; root += (p > 2 ? p - 1 : 1)) {
                    snprintf(what, sizeof what, "bcast n=%d root=%d", n, root);
                    memcpy(a, in, bytes);
                    memcpy(b, in, bytes);
                    MPI_Bcast(a, n, t->t, root, comm);
                    PMPI_Bcast(b, n, t->t, root, comm);
                    compare(what, t, a, b, n);
                }
            }
            if (wants("allgather")) {
                snprintf(what, sizeof what, "allgather n=%d", n);
                MPI_Allgather(in, n, t->t, a, n, t->t, comm);
                PMPI_Allgather(in, n, t->t, b, n, t->t, comm);
                compare(what, t, a, b, n * p);
                memset(a, 0, bytes * p);
                memcpy(a + me * bytes, in, bytes);
                MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, n, t->t, comm);
                compare(what, t, a, b, n * p);
            }
            if (wants("alltoall")) {
                snprintf(what, sizeof what, "alltoall n=%d", n);
                MPI_Alltoall(in, n, t->t, a, n, t->t, comm);
                PMPI_Alltoall(in, n, t->t, b, n, t->t, comm);
                compare(what, t, a, b, n * p);
                memcpy(a, in, bytes * p);
                MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, n, t->t, comm);
                compare(what, t, a, b, n * p);
            }
            for (int root = 0; root < p; root += (p > 2 ? p - 1 : 1)) {
                if (wants("scatter")) {
                    snprintf(what, sizeof what, "scatter n=%d root=%d", n, root);
                    MPI_Scatter(in, n, t->t, a, n, t->t, root, comm);
                    PMPI_Scatter(in, n, t->t, b, n, t->t, root, comm);
                    compare(what, t, a, b, n);
                    if (me == root) {
                        memcpy(a, in, bytes * p);
                        MPI_Scatter(a, n, t->t, MPI_IN_PLACE, n, t->t, root, comm);
                        compare(what, t, a, in, n * p); /* the root's buffer is untouched */
                    } else {
                        MPI_Scatter(NULL, n, t->t, a, n, t->t, root, comm);
                        compare(what, t, a, b, n);
                    }
                }
                if (wants("gather")) {
                    snprintf(what, sizeof what, "gather n=%d root=%d", n, root);
                    MPI_Gather(in, n, t->t, a, n, t->t, root, comm);
                    PMPI_Gather(in, n, t->t, b, n, t->t, root, comm);
                    if (me == root)
                        compare(what, t, a, b, n * p);
                    if (me == root) {
                        memset(a, 0, bytes * p);
                        memcpy(a + me * bytes, in, bytes);
                        MPI_Gather(MPI_IN_PLACE, n, t->t, a, n, t->t, root, comm);
                        compare(what, t, a, b, n * p);
                    } else {
                        MPI_Gather(in, n, t->t, NULL, n, t->t, root, comm);
                    }
                }
            }
            if (wants("allgatherv") || wants("alltoallv")) {
                /* Rank q's block holds (q + i) % 3 + n/2 elements; displacements
                 * leave a gap of one element between blocks. */
                int *rc = alloc(p * sizeof(int)), *rd = alloc(p * sizeof(int));
                int *sc = alloc(p * sizeof(int)), *sd = alloc(p * sizeof(int));
                int at = 0;
                for (int q = 0; q < p; q++) {
                    rc[q] = (q + ci) % 3 + n / 2;
                    rd[q] = at;
                    at += rc[q] + 1;
                }
                char *va = alloc((size_t)at * ts * p), *vb = alloc((size_t)at * ts * p);
                if (wants("allgatherv")) {
                    snprintf(what, sizeof what, "allgatherv n=%d", n);
                    memset(va, 0, (size_t)at * ts);
                    memset(vb, 0, (size_t)at * ts);
                    MPI_Allgatherv(in, rc[me], t->t, va, rc, rd, t->t, comm);
                    PMPI_Allgatherv(in, rc[me], t->t, vb, rc, rd, t->t, comm);
                    compare(what, t, va, vb, at);
                    memset(va, 0, (size_t)at * ts);
                    memcpy(va + (size_t)rd[me] * ts, in, (size_t)rc[me] * ts);
                    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, va, rc, rd, t->t, comm);
                    compare(what, t, va, vb, at);
                }
                if (wants("alltoallv")) {
                    /* Rank me sends (me + d) % 2 + n/3 elements to d, from
                     * displacements two apart; it receives what each q sends it. */
                    int sat = 0, rat = 0;
                    for (int d = 0; d < p; d++) {
                        sc[d] = (me + d) % 2 + n / 3;
                        sd[d] = sat;
                        sat += sc[d] + 2;
                        rc[d] = (d + me) % 2 + n / 3;
                        rd[d] = rat;
                        rat += rc[d] + 1;
                    }
                    char *src = alloc((size_t)sat * ts);
                    fill(t, MPI_SUM, src, sat, me, ci + 1);
                    snprintf(what, sizeof what, "alltoallv n=%d", n);
                    memset(va, 0, (size_t)rat * ts);
                    memset(vb, 0, (size_t)rat * ts);
                    MPI_Alltoallv(src, sc, sd, t->t, va, rc, rd, t->t, comm);
                    PMPI_Alltoallv(src, sc, sd, t->t, vb, rc, rd, t->t, comm);
                    compare(what, t, va, vb, rat);
                    free(src);
                }
                free(va); free(vb); free(rc); free(rd); free(sc); free(sd);
            }
            free(in); free(a); free(b);
        }
    }
    if (wants("barrier")) {
        for (int i = 0; i < 5; i++)
            MPI_Barrier(comm);
        checks++;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1)
        only = argv[1];
    reductions(MPI_COMM_WORLD);
    movement(MPI_COMM_WORLD);
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("collectives %s on %d ranks: %d checks, %d mismatches\n", only ? only : "all", size, checks, all);
    MPI_Finalize();
    return all ? 1 : 0;
}
