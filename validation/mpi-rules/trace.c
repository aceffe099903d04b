/* LD_PRELOAD shim: logs which coll/base algorithm Open MPI's coll/tuned runs.
 *
 * coll/tuned is its own shared object and calls the algorithms in libmpi
 * through the dynamic linker, so a function of the same name here runs
 * first. Each wrapper prints "trace <rank> <function>" and calls the real
 * one with the same arguments: they are all integers and pointers, which
 * the x86-64 calling convention passes the same way whatever their count,
 * so one forwarding shape with the most any of them takes (9) serves all. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*coll_fn)(long, long, long, long, long, long, long, long, long);

static int rank_of_process(void) {
    const char *r = getenv("OMPI_COMM_WORLD_RANK");
    return r ? atoi(r) : -1;
}

#define WRAP(name)                                                                  \
    int name(long a, long b, long c, long d, long e, long f, long g, long h, long i) { \
        static coll_fn real;                                                        \
        if (!real) real = (coll_fn)dlsym(RTLD_NEXT, #name);                         \
        fprintf(stderr, "trace %d %s\n", rank_of_process(), #name);                 \
        return real(a, b, c, d, e, f, g, h, i);                                     \
    }

WRAP(ompi_coll_base_allreduce_intra_basic_linear)
WRAP(ompi_coll_base_allreduce_intra_nonoverlapping)
WRAP(ompi_coll_base_allreduce_intra_recursivedoubling)
WRAP(ompi_coll_base_allreduce_intra_ring)
WRAP(ompi_coll_base_allreduce_intra_ring_segmented)
WRAP(ompi_coll_base_allreduce_intra_redscat_allgather)
WRAP(ompi_coll_base_bcast_intra_basic_linear)
WRAP(ompi_coll_base_bcast_intra_chain)
WRAP(ompi_coll_base_bcast_intra_pipeline)
WRAP(ompi_coll_base_bcast_intra_split_bintree)
WRAP(ompi_coll_base_bcast_intra_bintree)
WRAP(ompi_coll_base_bcast_intra_binomial)
WRAP(ompi_coll_base_bcast_intra_knomial)
WRAP(ompi_coll_base_bcast_intra_scatter_allgather)
WRAP(ompi_coll_base_bcast_intra_scatter_allgather_ring)
WRAP(ompi_coll_base_reduce_intra_basic_linear)
WRAP(ompi_coll_base_reduce_intra_chain)
WRAP(ompi_coll_base_reduce_intra_pipeline)
WRAP(ompi_coll_base_reduce_intra_binary)
WRAP(ompi_coll_base_reduce_intra_binomial)
WRAP(ompi_coll_base_reduce_intra_in_order_binary)
WRAP(ompi_coll_base_reduce_intra_redscat_gather)
WRAP(ompi_coll_base_allgather_intra_basic_linear)
WRAP(ompi_coll_base_allgather_intra_bruck)
WRAP(ompi_coll_base_allgather_intra_recursivedoubling)
WRAP(ompi_coll_base_allgather_intra_ring)
WRAP(ompi_coll_base_allgather_intra_neighborexchange)
WRAP(ompi_coll_base_allgather_intra_two_procs)
WRAP(ompi_coll_base_alltoall_intra_basic_linear)
WRAP(ompi_coll_base_alltoall_intra_pairwise)
WRAP(ompi_coll_base_alltoall_intra_bruck)
WRAP(ompi_coll_base_alltoall_intra_linear_sync)
WRAP(ompi_coll_base_alltoall_intra_two_procs)
WRAP(ompi_coll_base_reduce_scatter_block_basic_linear)
WRAP(ompi_coll_base_reduce_scatter_block_intra_recursivedoubling)
WRAP(ompi_coll_base_reduce_scatter_block_intra_recursivehalving)
WRAP(ompi_coll_base_reduce_scatter_block_intra_butterfly)
