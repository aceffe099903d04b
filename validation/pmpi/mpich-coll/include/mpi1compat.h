/* Written for topocoll's validation (not part of MPICH): opsum.c and
 * opprod.c call MPI_Errhandler_set, removed in MPI-3.0; Open MPI 4 refuses
 * it at compile time. Map it onto its MPI-2 replacement. Force-included
 * (gcc -include) after mpi.h. */
#include <mpi.h>
#undef MPI_Errhandler_set
#define MPI_Errhandler_set MPI_Comm_set_errhandler
