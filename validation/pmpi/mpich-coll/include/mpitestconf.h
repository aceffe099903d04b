/* Written for topocoll's validation (not part of MPICH): the few settings
 * MPICH's test/mpi/configure would write into mpitestconf.h, for a Linux
 * host with gcc and any MPI-3 library (Open MPI or MPICH). */
#ifndef MPITESTCONF_H_INCLUDED
#define MPITESTCONF_H_INCLUDED
#define HAVE_STDARG_H 1
#define HAVE_STRING_H 1
#define HAVE_UNISTD_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_RESOURCE_H 1
#define HAVE_GETRUSAGE 1
#define HAVE_MPI_INIT_THREAD 1
#define HAVE_MPI_WIN_CREATE 1
#define HAVE_LONG_DOUBLE 1
#define HAVE_LONG_LONG 1
/* Test only what the MPI standard defines (no MPIX extensions). */
#define USE_STRICT_MPI 1
#define THREAD_PACKAGE_NAME THREAD_PACKAGE_NONE
#define POINTERINT_t long
#endif
