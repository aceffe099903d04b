//! What the machine can hold: jobs that would not fit in memory are refused
//! before they start, with an error naming both figures, rather than
//! aborting on a failed allocation or filling memory page by page until
//! the kernel kills the process.
//!
//! A process in a container sees the host's `/proc/meminfo`, not the
//! container's limit: there a job that fits the host but not the limit
//! would be killed by the kernel, so the memory available is also bounded
//! by the headroom of every memory cgroup the process sits in (cgroup v2
//! or v1), at each level of the hierarchy.

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// Memory available for new allocations, if known: the machine's
/// (Linux's `MemAvailable`), or less where a memory cgroup's limit leaves
/// less.
pub fn available() -> Option<u64> {
    let machine = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|info| meminfo_available(&info));
    let group = std::fs::read_to_string("/proc/self/cgroup")
        .ok()
        .and_then(|groups| {
            memory_group_dirs(&groups, Path::new("/sys/fs/cgroup"))
                .iter()
                .filter_map(|dir| group_headroom(dir))
                .min()
        });
    match (machine, group) {
        (Some(m), Some(g)) => Some(m.min(g)),
        (m, g) => m.or(g),
    }
}

/// `MemAvailable` from the text of `/proc/meminfo`, in bytes.
fn meminfo_available(info: &str) -> Option<u64> {
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

/// The directories of the memory cgroups that hold this process, from the
/// text of `/proc/self/cgroup` (`id:controllers:path` lines) under the
/// cgroup mount `root`: its own group and every ancestor, each of whose
/// limits applies. The unified (v2) hierarchy is the line with id 0 and no
/// controllers, mounted at `root` itself; v1's memory hierarchy is at
/// `root/memory`. Directories that do not exist (a v1 machine's unified
/// line, say) are left out.
fn memory_group_dirs(groups: &str, root: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for line in groups.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let base = if id == "0" && controllers.is_empty() {
            root.to_path_buf()
        } else if controllers.split(',').any(|c| c == "memory") {
            root.join("memory")
        } else {
            continue;
        };
        let mut dir = base.join(path.trim_start_matches('/'));
        loop {
            if dir.is_dir() {
                dirs.push(dir.clone());
            }
            if dir == base || !dir.pop() {
                break;
            }
        }
    }
    dirs
}

/// What one memory cgroup (its directory) still lets the process take, or
/// `None` if it sets no limit (or is not a memory cgroup).
fn group_headroom(dir: &Path) -> Option<u64> {
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).ok();
    let stat = read("memory.stat").unwrap_or_default();
    if let (Some(limit), Some(usage)) = (read("memory.max"), read("memory.current")) {
        return headroom(&limit, &usage, &stat, "inactive_file");
    }
    let (limit, usage) = (
        read("memory.limit_in_bytes")?,
        read("memory.usage_in_bytes")?,
    );
    headroom(&limit, &usage, &stat, "total_inactive_file")
}

/// Limits at or above this are "no limit" (v1 writes 2^63 rounded down to
/// a page for an unset limit).
const NO_LIMIT: u64 = 1 << 60;

/// A group's limit less its usage, plus the file pages it holds that the
/// kernel would reclaim before it refuses memory (`inactive` in `stat`),
/// or `None` for no limit ("max" in v2).
fn headroom(limit: &str, usage: &str, stat: &str, inactive: &str) -> Option<u64> {
    let limit: u64 = limit.trim().parse().ok()?;
    if limit >= NO_LIMIT {
        return None;
    }
    let usage: u64 = usage.trim().parse().ok()?;
    let reclaimable = stat
        .lines()
        .find_map(|l| {
            let (key, value) = l.split_once(' ')?;
            (key == inactive).then(|| value.trim().parse::<u64>().ok())?
        })
        .unwrap_or(0);
    Some(
        limit
            .saturating_sub(usage)
            .saturating_add(reclaimable)
            .min(limit),
    )
}

/// Bytes as GiB, for messages.
pub fn gib(bytes: u64) -> f64 {
    bytes as f64 / (1u64 << 30) as f64
}

/// Refuses to allocate `bytes` for `what` when the machine has less memory
/// available.
pub fn check(bytes: u64, what: &str) -> Result<()> {
    match available() {
        Some(free) if bytes > free => Err(Error::TooLarge(format!(
            "{what} need {:.1} GiB but only {:.1} GiB of memory is available; use a smaller size or fewer ranks",
            gib(bytes),
            gib(free)
        ))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_gives_mem_available_in_bytes() {
        let info = "MemTotal:       24684132 kB\nMemFree:        17904384 kB\nMemAvailable:   24121652 kB\n";
        assert_eq!(meminfo_available(info), Some(24121652 * 1024));
        assert_eq!(meminfo_available("MemTotal: 1 kB\n"), None);
    }

    #[test]
    fn a_group_limit_less_its_usage_plus_its_inactive_files() {
        let stat = "anon 1000\nfile 9000\ninactive_file 4096\nactive_file 10\n";
        // v2: 1 GiB limit, 600 MiB used, 4 KiB of it reclaimable.
        assert_eq!(
            headroom("1073741824\n", "629145600\n", stat, "inactive_file"),
            Some(1073741824 - 629145600 + 4096)
        );
        // No limit: v2's "max", v1's 2^63 rounded down to a page.
        assert_eq!(headroom("max\n", "5\n", stat, "inactive_file"), None);
        assert_eq!(
            headroom("9223372036854771712\n", "5\n", "", "total_inactive_file"),
            None
        );
        // Over the limit (usage counts the reclaimable pages too): none left
        // but what reclaim gives, never more than the limit.
        assert_eq!(
            headroom(
                "1000\n",
                "1200\n",
                "total_inactive_file 300\n",
                "total_inactive_file"
            ),
            Some(300)
        );
        assert_eq!(
            headroom(
                "1000\n",
                "0\n",
                "total_inactive_file 300\n",
                "total_inactive_file"
            ),
            Some(1000)
        );
        // A key that only starts like the one asked for does not count.
        assert_eq!(
            headroom("1000\n", "100\n", "inactive_file_x 300\n", "inactive_file"),
            Some(900)
        );
    }

    #[test]
    fn the_groups_are_found_for_both_hierarchies_with_their_ancestors() {
        let root = std::env::temp_dir().join(format!("topocoll-cgroup-{}", std::process::id()));
        let v2 = root.join("user.slice/job");
        let v1 = root.join("memory/process_api/abc");
        std::fs::create_dir_all(&v2).unwrap();
        std::fs::create_dir_all(&v1).unwrap();
        let groups = "12:cpu,cpuacct:/elsewhere\n4:memory:/process_api/abc\n0::/user.slice/job\n";
        let dirs = memory_group_dirs(groups, &root);
        assert_eq!(
            dirs,
            vec![
                v1.clone(),
                root.join("memory/process_api"),
                root.join("memory"),
                v2.clone(),
                root.join("user.slice"),
                root.clone(),
            ]
        );
        // A group with a limit bounds the headroom; its parent without one
        // does not.
        std::fs::write(v2.join("memory.max"), "1048576\n").unwrap();
        std::fs::write(v2.join("memory.current"), "524288\n").unwrap();
        std::fs::write(v2.join("memory.stat"), "inactive_file 1024\n").unwrap();
        std::fs::write(root.join("user.slice/memory.max"), "max\n").unwrap();
        std::fs::write(root.join("user.slice/memory.current"), "7\n").unwrap();
        let found: Vec<u64> = dirs.iter().filter_map(|d| group_headroom(d)).collect();
        assert_eq!(found, vec![524288 + 1024]);
        std::fs::remove_dir_all(&root).unwrap();
    }
}
