//! The exported `MPI_*` symbols: each forwards to its implementation in
//! `shim.c` (`tc_MPI_*`).
//!
//! Why here and not in `shim.c`: a Rust `cdylib` exports only the symbols
//! its Rust code defines (rustc's version script hides everything else), so
//! the C definitions would never reach the dynamic symbol table that
//! `LD_PRELOAD` interposes through. Every argument of these functions is a
//! pointer, an `int`, or an MPI handle (a pointer in Open MPI, an `int` in
//! MPICH); on the 64-bit Linux ABIs (x86-64 System V, AArch64) each travels
//! in one 64-bit register or stack slot, so forwarding each as a `usize`
//! hands the C side exactly the bits the caller passed.

use std::os::raw::c_int;

macro_rules! interpose {
    ($($name:ident => $imp:ident($($arg:ident),*);)*) => {
        extern "C" {
            $(fn $imp($($arg: usize),*) -> c_int;)*
        }
        $(
            #[no_mangle]
            /// # Safety
            /// Called by an MPI program with the arguments the standard gives it.
            pub unsafe extern "C" fn $name($($arg: usize),*) -> c_int {
                $imp($($arg),*)
            }
        )*
    };
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
compile_error!("topocoll-mpi forwards MPI arguments as 64-bit words: x86-64 or AArch64 only");

interpose! {
    MPI_Allreduce => tc_MPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
    MPI_Reduce => tc_MPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
    MPI_Bcast => tc_MPI_Bcast(buf, count, datatype, root, comm);
    MPI_Reduce_scatter_block => tc_MPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
    MPI_Scan => tc_MPI_Scan(sendbuf, recvbuf, count, datatype, op, comm);
    MPI_Exscan => tc_MPI_Exscan(sendbuf, recvbuf, count, datatype, op, comm);
    MPI_Allgather => tc_MPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    MPI_Alltoall => tc_MPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    MPI_Scatter => tc_MPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    MPI_Gather => tc_MPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    MPI_Barrier => tc_MPI_Barrier(comm);
    MPI_Allgatherv => tc_MPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
    MPI_Alltoallv => tc_MPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
    MPI_Init => tc_MPI_Init(argc, argv);
    MPI_Init_thread => tc_MPI_Init_thread(argc, argv, required, provided);
    MPI_Finalize => tc_MPI_Finalize();
}
