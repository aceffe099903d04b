/// mimalloc, not the system allocator: it carves its heap out of 2 MiB-aligned
/// regions that Linux backs with transparent huge pages where it may (`madvise`
/// mode, as here, included), and glibc's malloc does not unless
/// `GLIBC_TUNABLES=glibc.malloc.hugetlb=1` is set before the process starts.
/// A large simulation touches its per-rank and per-transfer state at random:
/// with 4 KiB pages nearly every access also misses the TLB
/// (docs/PERFORMANCE.md). Results are the same bit for bit.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(topocoll::cli::main());
}
