/// mimalloc, not the system allocator: it carves its heap out of 2 MiB-aligned
/// regions that Linux backs with transparent huge pages where it may (`madvise`
/// mode, as here, included), and glibc's malloc does not unless
/// `GLIBC_TUNABLES=glibc.malloc.hugetlb=1` is set before the process starts.
/// A large simulation touches its per-rank and per-transfer state at random:
/// with 4 KiB pages nearly every access also misses the TLB. The 32 MiB
/// Trinaryx3 allreduce on 48×6×32 ran 1.25–1.4× faster in pair runs
/// (docs/PERFORMANCE.md); results are the same bit for bit.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay`'s place in mimalloc's `mi_option_t` (mimalloc 3,
/// as libmimalloc-sys 0.1.49 builds it; Cargo.lock pins the version). The
/// binding names no constant for it; a test below checks the index by the
/// option's default.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

fn main() {
    // Keep freed memory rather than hand it back to the OS after a delay:
    // memory handed back and taken again is faulted in anew, a 2 MiB page
    // cleared each time. The 128 MiB Trinaryx3 reduce on 48×6×32 ran
    // 1.06× faster in a pair run.
    // SAFETY: sets an allocator option; no memory is touched.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
    std::process::exit(topocoll::cli::main());
}

#[cfg(test)]
#[test]
fn the_purge_delay_index_names_the_purge_delay() {
    // mimalloc 3's purge delay defaults to 1,000 ms; an option enum that
    // moved would put another option, with another default, at this index.
    // SAFETY: reads an allocator option.
    let default = unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) };
    assert_eq!(default, 1000);
}
