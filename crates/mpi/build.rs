//! Compiles `src/shim.c`, the library's MPI side, with the MPI library's
//! own compiler wrapper (`$MPICC`, else `mpicc`), and links the MPI library.
//! Which MPI the library serves is the one this finds: build once per MPI
//! (`MPICC=mpicc.mpich cargo build --release -p topocoll-mpi --target-dir ...`).

fn main() {
    println!("cargo:rerun-if-changed=src/shim.c");
    println!("cargo:rerun-if-env-changed=MPICC");
    let lib = match build_probe_mpi::probe() {
        Ok(lib) => lib,
        Err(errs) => {
            for e in errs {
                println!("cargo:warning=finding MPI: {e}");
            }
            panic!("topocoll-mpi needs an MPI library (Open MPI or MPICH) and its mpicc");
        }
    };
    let mut cc = cc::Build::new();
    cc.file("src/shim.c").warnings(true).extra_warnings(true);
    if let Some(mpicc) = &lib.mpicc {
        cc.compiler(mpicc);
    }
    for inc in &lib.include_paths {
        cc.include(inc);
    }
    cc.compile("topocoll_mpi_shim");
    for dir in &lib.lib_paths {
        println!("cargo:rustc-link-search=native={}", dir.display());
    }
    for l in &lib.libs {
        println!("cargo:rustc-link-lib={l}");
    }
}
