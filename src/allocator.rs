//! The memory allocator of this binary (harness and reference server) and
//! how each tunes it.

/// A run allocates and frees many small JSON values from several threads at
/// once; with glibc's allocator that was about 40% of the harness's CPU time
/// (arena locks, consolidation), measured with perf on the whole catalog.
#[cfg(unix)]
#[global_allocator]
static ALLOCATOR: PromptlyPurgingLarge = PromptlyPurgingLarge;

/// Blocks at least this large go back to the system as soon as they are
/// freed; smaller ones after mimalloc's purge delay.
#[cfg(unix)]
const LARGE_BLOCK: usize = 4 << 20;

/// mimalloc, returning the memory of a freed large block to the system at
/// once. A hostile server can make the harness fill a buffer up to the
/// message cap (16 MiB) in each of several sessions, one after another:
/// with a delayed purge alone such a run peaked at 144 MiB (100 ms) to 192
/// MiB (1 s), and with this at 90 to 97 MiB. Purging every freed page at
/// once instead (as before) kept that bound too, but on a 10,000-tool
/// catalog, where each scenario frees the tens of MiB its walks held, it
/// decommitted and faulted in again about 6 GiB: the kernel's share of the
/// run went from about 2.2-3.0 s (100 ms delay) to 3.9 s.
#[cfg(unix)]
struct PromptlyPurgingLarge;

#[cfg(unix)]
impl PromptlyPurgingLarge {
    fn purge_if_large(size: usize) {
        if size >= LARGE_BLOCK {
            // SAFETY: collects the calling thread's heap and purges the
            // arenas' freed ranges; no block is touched.
            unsafe { libmimalloc_sys::mi_collect(true) }
        }
    }
}

// SAFETY: every allocation is mimalloc's, with its contract unchanged; the
// purge after a free touches no live block.
#[cfg(unix)]
unsafe impl std::alloc::GlobalAlloc for PromptlyPurgingLarge {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        mimalloc::MiMalloc.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        mimalloc::MiMalloc.alloc_zeroed(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        mimalloc::MiMalloc.dealloc(ptr, layout);
        Self::purge_if_large(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, size: usize) -> *mut u8 {
        let moved = mimalloc::MiMalloc.realloc(ptr, layout, size);
        if moved != ptr {
            Self::purge_if_large(layout.size());
        }
        moved
    }
}

/// Arenas are committed as they are used rather than up front, so that the
/// peak RSS is what the harness used; freed pages go back to the system
/// after 100 ms (mimalloc's default is 1 s): on a 10,000-tool catalog the
/// peak RSS was the same as with an immediate purge (352-384 MiB against
/// 371-374 MiB), and 1 s held 10 to 20 MiB more.
///
/// mimalloc never asks for transparent huge pages: it is built without
/// its `madvise(MADV_HUGEPAGE)` (libmimalloc-sys's `no_thp` feature,
/// Cargo.toml). Where the system grants huge pages only on request
/// (`madvise` mode), each first touch of an arena's 2 MiB block was zeroed
/// whole. Turning mimalloc's `allow_thp` option off here, as before, came
/// too late for the arena mimalloc reserves before `main`, which then held
/// the whole heap of a run: on server-everything the harness took 36 to
/// 38 huge-page faults a run and the kernel 0.74-0.86 s of CPU, against
/// none and 0.47-0.53 s built without it (three paired runs; wall median
/// 2.67 against 2.33 s in six). The option is not set from the
/// environment (`MIMALLOC_ALLOW_THP`) either: mimalloc would then switch
/// huge pages off for the process, which the servers it starts inherit.
#[cfg(unix)]
pub fn tune_allocator() {
    // The numbers of `mi_option_arena_eager_commit` and
    // `mi_option_purge_delay` in mimalloc v3's `mi_option_e`, the version
    // libmimalloc-sys 0.1.49 builds (it names only some options).
    const ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;
    const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
    // SAFETY: plain stores into mimalloc's option table; `mi_option_set` is
    // not thread safe, and this runs first in `main`, before any thread.
    unsafe {
        libmimalloc_sys::mi_option_set(ARENA_EAGER_COMMIT, 0);
        libmimalloc_sys::mi_option_set(PURGE_DELAY, 100);
    }
}

/// Where the system grants transparent huge pages always (not only on
/// request), the kernel backs any large enough anonymous range with them,
/// asked or not, and each first touch of a 2 MiB block is zeroed whole. A
/// run starts one or two hundred short-lived reference servers (this
/// binary), each touching a few such blocks. The reference server opts
/// out, and keeps its memory in 4 KiB pages. (Measured when mimalloc still
/// asked for huge pages, which had the same effect: page zeroing was 13%
/// of a whole-catalog run's CPU time (perf), and opting out the reference
/// brought the kernel's share from 1.3-1.8 s to 0.95-1.2 s, in paired
/// runs.) The harness does only where it starts no server of the user's
/// (`starts_no_user_server` in `main.rs`): the setting would be inherited
/// by every server it starts, and restoring it in the child means forking
/// instead of spawning, whose page-table copies cost more than the zeroing
/// saved.
#[cfg(target_os = "linux")]
pub fn avoid_huge_pages() {
    // SAFETY: PR_SET_THP_DISABLE takes plain integer arguments and changes
    // only this process's memory policy; a failure leaves the default.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}
