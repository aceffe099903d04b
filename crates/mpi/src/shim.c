/* The MPI side of libtopocoll_mpi.so.
 *
 * Why C: every MPI library has its own ABI (Open MPI's handles are
 * pointers, MPICH's are integers; MPI_IN_PLACE and the predefined
 * datatypes and operators are macros). Written against mpi.h and compiled by
 * the library's own mpicc, this file is the only part of the library that
 * knows the ABI. It
 *
 *  - defines the interposed collectives (MPI_Allreduce, ...), each of which
 *    classifies its datatype and operator, finds the communicator's private
 *    duplicate, hands the call to the Rust side (topocoll_mpi_run) and, when
 *    that declines, calls the library's own PMPI_ collective, timed;
 *  - gives the Rust side a transport over PMPI_Isend/PMPI_Irecv/PMPI_Waitsome
 *    on that duplicate (tc_isend, tc_irecv, tc_waitsome), so that a schedule's
 *    messages never meet the application's own point-to-point traffic;
 *  - reads the configuration at MPI_Init and writes the report at
 *    MPI_Finalize (topocoll_mpi_init, topocoll_mpi_finalize).
 *
 * The numeric codes shared with the Rust side are in src/abi.rs. */

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Element kinds (src/abi.rs: Kind). */
enum {
    TC_OPAQUE = 0, /* moved, never combined (MPI_LONG_DOUBLE, complex, ...) */
    TC_I8, TC_I16, TC_I32, TC_I64,
    TC_U8, TC_U16, TC_U32, TC_U64,
    TC_F32, TC_F64, TC_BOOL
};

/* Operators (src/abi.rs: MpiOp). */
enum {
    TC_OP_NONE = 0, TC_SUM, TC_PROD, TC_MIN, TC_MAX,
    TC_LAND, TC_LOR, TC_LXOR, TC_BAND, TC_BOR, TC_BXOR
};

/* Collectives (src/abi.rs: Coll). */
enum {
    TC_ALLREDUCE = 0, TC_BCAST, TC_REDUCE, TC_ALLGATHER, TC_REDUCE_SCATTER_BLOCK,
    TC_ALLTOALL, TC_SCATTER, TC_GATHER, TC_BARRIER, TC_SCAN, TC_EXSCAN,
    TC_ALLGATHERV, TC_ALLTOALLV
};

/* Why a call went to the library's own collective, when this file decides
 * it (src/abi.rs: Fallback; the Rust side's own reasons follow these). */
enum {
    TC_FB_DERIVED = 1,   /* a reduction on a derived or non-contiguous datatype, or a
                          * buffer that could not be packed */
    TC_FB_USER_OP = 2,   /* a user-defined (or MAXLOC/MINLOC/REPLACE) operator */
    TC_FB_INTER = 3,     /* an intercommunicator */
    TC_FB_TYPE_OP = 4    /* an operator the datatype does not take here */
};

/* One call, as the Rust side reads it (src/abi.rs: Call). */
struct tc_call {
    int coll, rank, size, root;
    const void *sendbuf;
    void *recvbuf;
    int in_place;
    int kind, op;
    uint64_t count, type_size;
    const int *counts, *displs, *rcounts, *rdispls;
    const int *matrix; /* alltoallv: every rank's send counts, row = sender */
    void *ctx;
};

/* A communicator's private duplicate and its requests in flight. */
struct tc_comm {
    MPI_Comm dup;
    int rank, size, inter;
    MPI_Request *reqs;
    MPI_Status *statuses; /* Waitsome's (MPI_STATUSES_IGNORE trips gcc's bounds checks on MPICH's header) */
    int *idx;
    int cap;
    int used; /* slots below this may hold a request; none at or above it */
    int *matrix; /* alltoallv's gathered counts */
    int matrix_len;
};

extern int topocoll_mpi_init(int tag_ub);
extern void topocoll_mpi_say_refusal(void);
extern void topocoll_mpi_finalize(int rank, int size, int (*gather)(const char *, int, char **, int **));
/* 0: ran; > 0: fall back for this reason; < 0: failed (already said). */
extern int topocoll_mpi_run(const struct tc_call *call);
extern void topocoll_mpi_native(int coll, int comm_size, uint64_t bytes, int reason, double seconds);
extern int topocoll_mpi_wants(int coll, int comm_size);

static int keyval = MPI_KEYVAL_INVALID;

static int comm_delete(MPI_Comm comm, int key, void *attr, void *extra)
{
    (void)comm; (void)key; (void)extra;
    struct tc_comm *c = attr;
    if (c->dup != MPI_COMM_NULL)
        PMPI_Comm_free(&c->dup);
    free(c->reqs);
    free(c->statuses);
    free(c->idx);
    free(c->matrix);
    free(c);
    return MPI_SUCCESS;
}

/* The communicator's state, made on its first interposed collective (a
 * collective call itself, so every rank of the communicator makes it at the
 * same call). */
static struct tc_comm *comm_state(MPI_Comm comm)
{
    void *attr;
    int flag = 0;
    if (keyval == MPI_KEYVAL_INVALID)
        PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, comm_delete, &keyval, NULL);
    PMPI_Comm_get_attr(comm, keyval, &attr, &flag);
    if (flag)
        return attr;
    struct tc_comm *c = calloc(1, sizeof *c);
    PMPI_Comm_test_inter(comm, &c->inter);
    c->dup = MPI_COMM_NULL;
    if (!c->inter) {
        PMPI_Comm_dup(comm, &c->dup);
        PMPI_Comm_rank(comm, &c->rank);
        PMPI_Comm_size(comm, &c->size);
    }
    PMPI_Comm_set_attr(comm, keyval, c);
    return c;
}

/* ---- the transport the Rust side drives ---- */

static int grow(struct tc_comm *c)
{
    int cap = c->cap ? 2 * c->cap : 64;
    MPI_Request *r = realloc(c->reqs, cap * sizeof *r);
    if (r)
        c->reqs = r;
    MPI_Status *st = realloc(c->statuses, cap * sizeof *st);
    if (st)
        c->statuses = st;
    int *ix = realloc(c->idx, cap * sizeof *ix);
    if (ix)
        c->idx = ix;
    if (!r || !st || !ix)
        return -1;
    for (int i = c->cap; i < cap; i++)
        r[i] = MPI_REQUEST_NULL;
    c->cap = cap;
    return 0;
}

static int free_slot(struct tc_comm *c)
{
    int at = c->cap;
    for (int i = 0; i < c->cap; i++)
        if (c->reqs[i] == MPI_REQUEST_NULL) {
            at = i;
            break;
        }
    if (at == c->cap && grow(c))
        return -1;
    if (at >= c->used)
        c->used = at + 1;
    return at;
}

/* A send of `bytes` bytes to `peer`: its slot, or -1. */
int tc_isend(void *ctx, const void *buf, uint64_t bytes, int peer, int tag)
{
    struct tc_comm *c = ctx;
    int s = free_slot(c);
    if (s < 0 || bytes > INT32_MAX)
        return -1;
    if (PMPI_Isend(buf, (int)bytes, MPI_BYTE, peer, tag, c->dup, &c->reqs[s]) != MPI_SUCCESS)
        return -1;
    return s;
}

int tc_irecv(void *ctx, void *buf, uint64_t bytes, int peer, int tag)
{
    struct tc_comm *c = ctx;
    int s = free_slot(c);
    if (s < 0 || bytes > INT32_MAX)
        return -1;
    if (PMPI_Irecv(buf, (int)bytes, MPI_BYTE, peer, tag, c->dup, &c->reqs[s]) != MPI_SUCCESS)
        return -1;
    return s;
}

/* Waits for at least one request; writes the completed slots to `out`
 * (room for every slot) and returns how many, or -1. */
int tc_waitsome(void *ctx, int *out)
{
    struct tc_comm *c = ctx;
    int n = 0;
    /* Only the slots in use are scanned: a small collective's two or three
     * requests, not the array's capacity. */
    if (PMPI_Waitsome(c->used, c->reqs, &n, c->idx, c->statuses) != MPI_SUCCESS)
        return -1;
    if (n == MPI_UNDEFINED)
        return 0;
    memcpy(out, c->idx, n * sizeof *out);
    while (c->used > 0 && c->reqs[c->used - 1] == MPI_REQUEST_NULL)
        c->used--;
    return n;
}

/* Slots the transport holds (for the Rust side's output array). */
int tc_slots(void *ctx)
{
    return ((struct tc_comm *)ctx)->cap;
}

double tc_wtime(void)
{
    return PMPI_Wtime();
}

/* ---- classification ---- */

static int kind_of(MPI_Datatype t)
{
    if (t == MPI_INT8_T || t == MPI_SIGNED_CHAR || t == MPI_CHAR) return TC_I8;
    if (t == MPI_INT16_T || t == MPI_SHORT) return TC_I16;
    if (t == MPI_INT32_T || t == MPI_INT) return TC_I32;
    if (t == MPI_INT64_T || t == MPI_LONG_LONG_INT || t == MPI_LONG_LONG) return TC_I64;
    if (t == MPI_UINT8_T || t == MPI_UNSIGNED_CHAR || t == MPI_BYTE) return TC_U8;
    if (t == MPI_UINT16_T || t == MPI_UNSIGNED_SHORT) return TC_U16;
    if (t == MPI_UINT32_T || t == MPI_UNSIGNED) return TC_U32;
    if (t == MPI_UINT64_T || t == MPI_UNSIGNED_LONG_LONG) return TC_U64;
    if (t == MPI_LONG || t == MPI_AINT || t == MPI_OFFSET || t == MPI_COUNT)
        return sizeof(long) == 8 ? TC_I64 : TC_I32;
    if (t == MPI_UNSIGNED_LONG)
        return sizeof(long) == 8 ? TC_U64 : TC_U32;
    if (t == MPI_FLOAT) return TC_F32;
    if (t == MPI_DOUBLE) return TC_F64;
    if (t == MPI_C_BOOL) return TC_BOOL;
    return TC_OPAQUE;
}

static int op_of(MPI_Op op)
{
    if (op == MPI_SUM) return TC_SUM;
    if (op == MPI_PROD) return TC_PROD;
    if (op == MPI_MIN) return TC_MIN;
    if (op == MPI_MAX) return TC_MAX;
    if (op == MPI_LAND) return TC_LAND;
    if (op == MPI_LOR) return TC_LOR;
    if (op == MPI_LXOR) return TC_LXOR;
    if (op == MPI_BAND) return TC_BAND;
    if (op == MPI_BOR) return TC_BOR;
    if (op == MPI_BXOR) return TC_BXOR;
    return TC_OP_NONE;
}

/* Whether `count` elements of `t` are the bytes at the buffer, end to end:
 * a predefined type whose extent is its size from a lower bound of 0
 * (MPI_DOUBLE_INT and the other pair types are named but have holes). */
static int contiguous(MPI_Datatype t)
{
    int ni, na, nd, combiner, size;
    MPI_Aint lb, extent;
    if (t == MPI_DATATYPE_NULL)
        return 0;
    PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
    if (combiner != MPI_COMBINER_NAMED)
        return 0;
    PMPI_Type_size(t, &size);
    PMPI_Type_get_extent(t, &lb, &extent);
    return lb == 0 && extent == size;
}

static uint64_t type_bytes(MPI_Datatype t)
{
    int size = 0;
    if (t != MPI_DATATYPE_NULL)
        PMPI_Type_size(t, &size);
    return (uint64_t)size;
}

/* A data-movement buffer as bytes: the caller's own when its type is
 * contiguous, else a packed copy (written back by unview when the call
 * receives into it). Data movement works on the type signature alone, so
 * every rank decides the same whatever datatypes each passes. */
struct view {
    void *at;
    void *packed;
};

static int view(struct view *v, const void *buf, uint64_t count, MPI_Datatype t, MPI_Comm comm)
{
    v->packed = NULL;
    v->at = (void *)buf;
    if (contiguous(t) || count == 0)
        return 0;
    int need = 0, pos = 0;
    if (count > INT32_MAX || PMPI_Pack_size((int)count, t, comm, &need) != MPI_SUCCESS)
        return -1;
    v->packed = malloc(need ? need : 1);
    if (!v->packed)
        return -1;
    if (PMPI_Pack(buf, (int)count, t, v->packed, need, &pos, comm) != MPI_SUCCESS ||
        (uint64_t)pos != count * type_bytes(t)) {
        free(v->packed);
        v->packed = NULL;
        return -1;
    }
    v->at = v->packed;
    return 0;
}

/* Writes a packed receive back to the caller's buffer (`back`), frees it. */
static void unview(struct view *v, void *buf, uint64_t count, MPI_Datatype t, MPI_Comm comm, int back)
{
    if (!v->packed)
        return;
    if (back) {
        int pos = 0;
        PMPI_Unpack(v->packed, (int)(count * type_bytes(t)), &pos, buf, (int)count, t, comm);
    }
    free(v->packed);
    v->packed = NULL;
}

/* Fills the parts of `c` every collective shares; 0, or why to fall back. */
static int prepare(struct tc_call *c, int coll, MPI_Comm comm, MPI_Datatype t, int reduces,
                   MPI_Op op)
{
    memset(c, 0, sizeof *c);
    c->coll = coll;
    struct tc_comm *st = comm_state(comm);
    if (st->inter)
        return TC_FB_INTER;
    c->ctx = st;
    c->rank = st->rank;
    c->size = st->size;
    /* Data movement is bytes (type_size 1): only a reduction's elements
     * matter, and a reduction's datatype is the same on every rank. */
    c->type_size = 1;
    c->kind = TC_OPAQUE;
    if (reduces) {
        if (!contiguous(t))
            return TC_FB_DERIVED;
        c->type_size = type_bytes(t);
        c->kind = kind_of(t);
        c->op = op_of(op);
        if (c->op == TC_OP_NONE)
            return TC_FB_USER_OP;
        if (c->kind == TC_OPAQUE)
            return TC_FB_TYPE_OP;
        int is_float = c->kind == TC_F32 || c->kind == TC_F64;
        int bitwise = c->op >= TC_BAND;
        int logical = c->op >= TC_LAND && c->op <= TC_LXOR;
        if ((is_float && (bitwise || logical)) || (c->kind == TC_BOOL && !logical))
            return TC_FB_TYPE_OP;
    }
    return 0;
}

/* The size a report files a call under: topocoll's --size (the block per
 * peer for the block collectives, the whole buffer otherwise). */
static uint64_t size_of_call(const struct tc_call *c)
{
    return c->count * c->type_size;
}

/* Runs the call through topocoll; returns 0 when done, else the fallback
 * reason (aborts the job on a failure, which the Rust side has named). */
static int run(struct tc_call *c, int why)
{
    if (why)
        return why;
    int rc = topocoll_mpi_run(c);
    if (rc < 0)
        PMPI_Abort(MPI_COMM_WORLD, 2);
    return rc;
}

#define NATIVE(coll_code, why, c, call)                                                   \
    do {                                                                                  \
        double t0_ = PMPI_Wtime();                                                        \
        int rc_ = (call);                                                                 \
        topocoll_mpi_native((coll_code), (c).size, size_of_call(&(c)), (why),            \
                            PMPI_Wtime() - t0_);                                          \
        return rc_;                                                                       \
    } while (0)

/* ---- the interposed collectives ---- */

int tc_MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype t, MPI_Op op,
                  MPI_Comm comm)
{
    struct tc_call c;
    int why = prepare(&c, TC_ALLREDUCE, comm, t, 1, op);
    c.in_place = sendbuf == MPI_IN_PLACE;
    c.sendbuf = sendbuf;
    c.recvbuf = recvbuf;
    c.count = (uint64_t)count;
    if (!(why = run(&c, why)))
        return MPI_SUCCESS;
    NATIVE(TC_ALLREDUCE, why, c, PMPI_Allreduce(sendbuf, recvbuf, count, t, op, comm));
}

int tc_MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype t, MPI_Op op, int root,
               MPI_Comm comm)
{
    struct tc_call c;
    int why = prepare(&c, TC_REDUCE, comm, t, 1, op);
    c.in_place = sendbuf == MPI_IN_PLACE;
    c.sendbuf = sendbuf;
    c.recvbuf = recvbuf;
    c.count = (uint64_t)count;
    c.root = root;
    if (!(why = run(&c, why)))
        return MPI_SUCCESS;
    NATIVE(TC_REDUCE, why, c, PMPI_Reduce(sendbuf, recvbuf, count, t, op, root, comm));
}

int tc_MPI_Bcast(void *buf, int count, MPI_Datatype t, int root, MPI_Comm comm)
{
    struct tc_call c;
    struct view v = {0};
    int why = prepare(&c, TC_BCAST, comm, t, 0, MPI_OP_NULL);
    c.count = (uint64_t)count * type_bytes(t);
    c.root = root;
    if (!why && view(&v, buf, (uint64_t)count, t, comm))
        why = TC_FB_DERIVED;
    c.recvbuf = v.at;
    if (!(why = run(&c, why))) {
        unview(&v, buf, (uint64_t)count, t, comm, c.rank != root);
        return MPI_SUCCESS;
    }
    unview(&v, buf, (uint64_t)count, t, comm, 0);
    NATIVE(TC_BCAST, why, c, PMPI_Bcast(buf, count, t, root, comm));
}

int tc_MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype t,
                             MPI_Op op, MPI_Comm comm)
{
    struct tc_call c;
    int why = prepare(&c, TC_REDUCE_SCATTER_BLOCK, comm, t, 1, op);
    c.in_place = sendbuf == MPI_IN_PLACE;
    c.sendbuf = sendbuf;
    c.recvbuf = recvbuf;
    c.count = (uint64_t)recvcount;
    if (!(why = run(&c, why)))
        return MPI_SUCCESS;
    NATIVE(TC_REDUCE_SCATTER_BLOCK, why, c,
           PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, t, op, comm));
}

int tc_MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype t, MPI_Op op,
             MPI_Comm comm)
{
    struct tc_call c;
    int why = prepare(&c, TC_SCAN, comm, t, 1, op);
    c.in_place = sendbuf == MPI_IN_PLACE;
    c.sendbuf = sendbuf;
    c.recvbuf = recvbuf;
    c.count = (uint64_t)count;
    if (!(why = run(&c, why)))
        return MPI_SUCCESS;
    NATIVE(TC_SCAN, why, c, PMPI_Scan(sendbuf, recvbuf, count, t, op, comm));
}

int tc_MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype t, MPI_Op op,
               MPI_Comm comm)
{
    struct tc_call c;
    int why = prepare(&c, TC_EXSCAN, comm, t, 1, op);
    c.in_place = sendbuf == MPI_IN_PLACE;
    c.sendbuf = sendbuf;
    c.recvbuf = recvbuf;
    c.count = (uint64_t)count;
    if (!(why = run(&c, why)))
        return MPI_SUCCESS;
    NATIVE(TC_EXSCAN, why, c, PMPI_Exscan(sendbuf, recvbuf, count, t, op, comm));
}

/* The block collectives move bytes: a side whose datatype is not contiguous
 * is packed (and unpacked after, for the receive side), so the decision
 * rests on the type signature, which MPI makes the same on every rank. */

int tc_MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype st, void *recvbuf,
                     int recvcount, MPI_Datatype rt, MPI_Comm comm)
{
    struct tc_call c;
    struct view sv = {0}, rv = {0};
    int why = prepare(&c, TC_ALLGATHER, comm, rt, 0, MPI_OP_NULL);
    c.in_place = sendbuf == MPI_IN_PLACE;
    c.count = (uint64_t)recvcount * type_bytes(rt);
    uint64_t all = (uint64_t)recvcount * c.size;
    if (!why && ((!c.in_place && view(&sv, sendbuf, (uint64_t)sendcount, st, comm)) ||
                 view(&rv, recvbuf, all, rt, comm)))
        why = TC_FB_DERIVED;
    c.sendbuf = sv.at;
    c.recvbuf = rv.at;
    why = run(&c, why);
    unview(&sv, NULL, 0, st, comm, 0);
    unview(&rv, recvbuf, all, rt, comm, !why);
    if (!why)
        return MPI_SUCCESS;
    NATIVE(TC_ALLGATHER, why, c,
           PMPI_Allgather(sendbuf, sendcount, st, recvbuf, recvcount, rt, comm));
}

int tc_MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype st, void *recvbuf,
                    int recvcount, MPI_Datatype rt, MPI_Comm comm)
{
    struct tc_call c;
    struct view sv = {0}, rv = {0};
    int why = prepare(&c, TC_ALLTOALL, comm, rt, 0, MPI_OP_NULL);
    c.in_place = sendbuf == MPI_IN_PLACE;
    c.count = (uint64_t)recvcount * type_bytes(rt);
    uint64_t sall = (uint64_t)sendcount * c.size, rall = (uint64_t)recvcount * c.size;
    if (!why && ((!c.in_place && view(&sv, sendbuf, sall, st, comm)) ||
                 view(&rv, recvbuf, rall, rt, comm)))
        why = TC_FB_DERIVED;
    c.sendbuf = sv.at;
    c.recvbuf = rv.at;
    why = run(&c, why);
    unview(&sv, NULL, 0, st, comm, 0);
    unview(&rv, recvbuf, rall, rt, comm, !why);
    if (!why)
        return MPI_SUCCESS;
    NATIVE(TC_ALLTOALL, why, c,
           PMPI_Alltoall(sendbuf, sendcount, st, recvbuf, recvcount, rt, comm));
}

int tc_MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype st, void *recvbuf,
                   int recvcount, MPI_Datatype rt, int root, MPI_Comm comm)
{
    struct tc_call c;
    struct view sv = {0}, rv = {0};
    int why = prepare(&c, TC_SCATTER, comm, rt, 0, MPI_OP_NULL);
    int is_root = !why && c.rank == root;
    /* The block is the root's send side there (its receive side is
     * insignificant when it receives in place), the receive side elsewhere. */
    c.in_place = is_root && recvbuf == MPI_IN_PLACE;
    c.count = is_root ? (uint64_t)sendcount * type_bytes(st) : (uint64_t)recvcount * type_bytes(rt);
    c.root = root;
    uint64_t sall = (uint64_t)sendcount * c.size;
    if (!why && ((is_root && view(&sv, sendbuf, sall, st, comm)) ||
                 (!c.in_place && view(&rv, recvbuf, (uint64_t)recvcount, rt, comm))))
        why = TC_FB_DERIVED;
    c.sendbuf = sv.at;
    c.recvbuf = rv.at;
    why = run(&c, why);
    unview(&sv, NULL, 0, st, comm, 0);
    unview(&rv, recvbuf, (uint64_t)recvcount, rt, comm, !why);
    if (!why)
        return MPI_SUCCESS;
    NATIVE(TC_SCATTER, why, c,
           PMPI_Scatter(sendbuf, sendcount, st, recvbuf, recvcount, rt, root, comm));
}

int tc_MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype st, void *recvbuf,
                  int recvcount, MPI_Datatype rt, int root, MPI_Comm comm)
{
    struct tc_call c;
    struct view sv = {0}, rv = {0};
    int why = prepare(&c, TC_GATHER, comm, st, 0, MPI_OP_NULL);
    int is_root = !why && c.rank == root;
    c.in_place = is_root && sendbuf == MPI_IN_PLACE;
    c.count = c.in_place ? (uint64_t)recvcount * type_bytes(rt) : (uint64_t)sendcount * type_bytes(st);
    c.root = root;
    uint64_t rall = (uint64_t)recvcount * c.size;
    if (!why && ((!c.in_place && view(&sv, sendbuf, (uint64_t)sendcount, st, comm)) ||
                 (is_root && view(&rv, recvbuf, rall, rt, comm))))
        why = TC_FB_DERIVED;
    c.sendbuf = sv.at;
    c.recvbuf = is_root ? rv.at : NULL;
    why = run(&c, why);
    unview(&sv, NULL, 0, st, comm, 0);
    unview(&rv, recvbuf, rall, rt, comm, !why);
    if (!why)
        return MPI_SUCCESS;
    NATIVE(TC_GATHER, why, c,
           PMPI_Gather(sendbuf, sendcount, st, recvbuf, recvcount, rt, root, comm));
}

int tc_MPI_Barrier(MPI_Comm comm)
{
    struct tc_call c;
    int why = prepare(&c, TC_BARRIER, comm, MPI_DATATYPE_NULL, 0, MPI_OP_NULL);
    if (!(why = run(&c, why)))
        return MPI_SUCCESS;
    NATIVE(TC_BARRIER, why, c, PMPI_Barrier(comm));
}

/* A v-collective's blocks as bytes: block i, counts[i] elements of `t` at
 * displs[i] extents, becomes bcounts[i] bytes at byte displs[i] — of the
 * caller's buffer when `t` is contiguous, else of a packed copy (blocks end
 * to end). */
struct vview {
    char *at, *packed;
    int *bcounts, *bdispls;
    int total;
};

static int vview(struct vview *v, const void *buf, const int *counts, const int *displs,
                 MPI_Datatype t, int p, MPI_Comm comm)
{
    memset(v, 0, sizeof *v);
    uint64_t size = type_bytes(t);
    MPI_Aint lb, extent;
    PMPI_Type_get_extent(t, &lb, &extent);
    v->bcounts = malloc(p * sizeof(int));
    v->bdispls = malloc(p * sizeof(int));
    if (!v->bcounts || !v->bdispls)
        return -1;
    int dense = contiguous(t);
    uint64_t at = 0;
    for (int i = 0; i < p; i++) {
        uint64_t n = (uint64_t)counts[i] * size;
        uint64_t d = dense ? (uint64_t)displs[i] * size : at;
        if (n > INT32_MAX || d > INT32_MAX || displs[i] < 0)
            return -1;
        v->bcounts[i] = (int)n;
        v->bdispls[i] = (int)d;
        at += n;
    }
    if (at > INT32_MAX)
        return -1;
    v->total = (int)at;
    v->at = (char *)buf;
    if (dense)
        return 0;
    v->packed = malloc(at ? at : 1);
    if (!v->packed)
        return -1;
    for (int i = 0; i < p; i++) {
        int pos = v->bdispls[i];
        PMPI_Pack((const char *)buf + displs[i] * extent, counts[i], t, v->packed, v->total, &pos, comm);
    }
    v->at = v->packed;
    return 0;
}

static void vunview(struct vview *v, void *buf, const int *counts, const int *displs, MPI_Datatype t,
                    int p, MPI_Comm comm, int back)
{
    if (v->packed && back) {
        MPI_Aint lb, extent;
        PMPI_Type_get_extent(t, &lb, &extent);
        for (int i = 0; i < p; i++) {
            int pos = v->bdispls[i];
            PMPI_Unpack(v->packed, v->total, &pos, (char *)buf + displs[i] * extent, counts[i], t, comm);
        }
    }
    free(v->packed);
    free(v->bcounts);
    free(v->bdispls);
    memset(v, 0, sizeof *v);
}

int tc_MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype st, void *recvbuf,
                      const int recvcounts[], const int displs[], MPI_Datatype rt, MPI_Comm comm)
{
    struct tc_call c;
    struct view sv = {0};
    struct vview rv = {0};
    int why = prepare(&c, TC_ALLGATHERV, comm, rt, 0, MPI_OP_NULL);
    c.in_place = sendbuf == MPI_IN_PLACE;
    if (!why && ((!c.in_place && view(&sv, sendbuf, (uint64_t)sendcount, st, comm)) ||
                 vview(&rv, recvbuf, recvcounts, displs, rt, c.size, comm)))
        why = TC_FB_DERIVED;
    c.sendbuf = sv.at;
    c.recvbuf = rv.at;
    c.counts = rv.bcounts;
    c.displs = rv.bdispls;
    if (!why) {
        uint64_t most = 0;
        for (int i = 0; i < c.size; i++)
            if ((uint64_t)rv.bcounts[i] > most)
                most = (uint64_t)rv.bcounts[i];
        c.count = most;
    }
    why = run(&c, why);
    unview(&sv, NULL, 0, st, comm, 0);
    vunview(&rv, recvbuf, recvcounts, displs, rt, c.size, comm, !why);
    if (!why)
        return MPI_SUCCESS;
    NATIVE(TC_ALLGATHERV, why, c,
           PMPI_Allgatherv(sendbuf, sendcount, st, recvbuf, recvcounts, displs, rt, comm));
}

int tc_MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                     MPI_Datatype st, void *recvbuf, const int recvcounts[], const int rdispls[],
                     MPI_Datatype rt, MPI_Comm comm)
{
    struct tc_call c;
    struct vview sv = {0}, rv = {0};
    int why = prepare(&c, TC_ALLTOALLV, comm, rt, 0, MPI_OP_NULL);
    c.in_place = sendbuf == MPI_IN_PLACE;
    /* In place, what is sent is what the receive buffer holds. */
    const void *from = c.in_place ? recvbuf : sendbuf;
    const int *fc = c.in_place ? recvcounts : sendcounts, *fd = c.in_place ? rdispls : sdispls;
    MPI_Datatype ft = c.in_place ? rt : st;
    int usable = !why && !vview(&sv, from, fc, fd, ft, c.size, comm) &&
                 !vview(&rv, recvbuf, recvcounts, rdispls, rt, c.size, comm);
    /* Every rank builds the same schedule, so every rank needs every rank's
     * counts (in bytes): one allgather of P + 1 integers, made whenever the
     * configuration may serve the call (the same on every rank), whose last
     * integer says whether the rank can serve it. If one cannot, none does. */
    if (!why && topocoll_mpi_wants(TC_ALLTOALLV, c.size)) {
        struct tc_comm *s = c.ctx;
        int w = c.size + 1, n = c.size * w;
        if (s->matrix_len < n) {
            free(s->matrix);
            s->matrix = malloc(n * sizeof(int));
            s->matrix_len = n;
        }
        int *mine = malloc(w * sizeof(int));
        for (int i = 0; i < c.size; i++)
            mine[i] = usable ? sv.bcounts[i] : 0;
        mine[c.size] = usable;
        PMPI_Allgather(mine, w, MPI_INT, s->matrix, w, MPI_INT, s->dup);
        free(mine);
        int all = 1;
        uint64_t most = 0;
        /* Rows of P counts, end to end, as the Rust side reads them. */
        for (int r = 0; r < c.size; r++) {
            all &= s->matrix[r * w + c.size];
            for (int d = 0; d < c.size; d++) {
                int x = s->matrix[r * w + d];
                s->matrix[r * c.size + d] = x;
                if ((uint64_t)x > most)
                    most = (uint64_t)x;
            }
        }
        if (all) {
            c.matrix = s->matrix;
            c.count = most;
        } else {
            why = TC_FB_DERIVED;
        }
    } else if (!why && !usable) {
        why = TC_FB_DERIVED;
    }
    c.sendbuf = sv.at;
    c.recvbuf = rv.at;
    c.counts = sv.bcounts;
    c.displs = sv.bdispls;
    c.rcounts = rv.bcounts;
    c.rdispls = rv.bdispls;
    why = run(&c, why);
    vunview(&sv, NULL, fc, fd, ft, c.size, comm, 0);
    vunview(&rv, recvbuf, recvcounts, rdispls, rt, c.size, comm, !why);
    if (!why)
        return MPI_SUCCESS;
    NATIVE(TC_ALLTOALLV, why, c,
           PMPI_Alltoallv(sendbuf, sendcounts, sdispls, st, recvbuf, recvcounts, rdispls, rt, comm));
}

/* ---- start and end ---- */

/* Reads the configuration. A rank that cannot is refused on every rank:
 * the lowest such rank says why in one line, every rank waits until it has,
 * and every rank exits with status 2 (a rank killed by the launcher while
 * another is still talking would lose the line). */
static void start(void)
{
    int rank = 0, size = 1, flag = 0, *ub = NULL;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    int bad = topocoll_mpi_init(flag ? *ub : 32767) != 0;
    int mine = bad ? rank : size, first = size;
    PMPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first == size)
        return;
    if (rank == first)
        topocoll_mpi_say_refusal();
    PMPI_Barrier(MPI_COMM_WORLD);
    exit(2);
}

int tc_MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS)
        start();
    return rc;
}

int tc_MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        start();
    return rc;
}

/* Gathers each rank's report text to rank 0 of the world: rank 0 gets a
 * malloc'd buffer of every text, end to end, and their lengths. */
static int gather_texts(const char *mine, int len, char **all, int **lens)
{
    int rank, size;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    int *l = rank == 0 ? malloc(size * sizeof(int)) : NULL;
    PMPI_Gather(&len, 1, MPI_INT, l, 1, MPI_INT, 0, MPI_COMM_WORLD);
    int *at = NULL;
    char *buf = NULL;
    if (rank == 0) {
        at = malloc(size * sizeof(int));
        int total = 0;
        for (int i = 0; i < size; i++) {
            at[i] = total;
            total += l[i];
        }
        buf = malloc(total + 1);
    }
    PMPI_Gatherv(mine, len, MPI_CHAR, buf, l, at, MPI_CHAR, 0, MPI_COMM_WORLD);
    free(at);
    *all = buf;
    *lens = l;
    return size;
}

int tc_MPI_Finalize(void)
{
    int rank = 0, size = 1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    topocoll_mpi_finalize(rank, size, gather_texts);
    return PMPI_Finalize();
}
