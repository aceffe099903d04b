//! Job files: several jobs on one network, each priced alone and together,
//! against times worked out by hand; bad placements refused in one line.

mod common;

use common::{close, network, BW, LAT};
use std::path::{Path, PathBuf};
use topocoll_base::error::Error;
use topocoll_sim::SimConfig;
use topocoll_workload::jobs::{self, JobsReport, Setting};
use topocoll_workload::{Choice, Semantics};

/// A folder with a two-rank trace of one 1 MB message, and `toml` as the
/// job file.
fn job_file(name: &str, toml: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("topocoll-jobs-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("msg.txt"),
        "0 send 1 0 1000000\n1 recv 0 0 1000000\n",
    )
    .unwrap();
    let f = dir.join("jobs.toml");
    std::fs::write(&f, toml).unwrap();
    f
}

fn priced(path: &Path, spec: &str) -> topocoll_workload::Result<JobsReport> {
    let base = network(spec);
    let cfg = SimConfig {
        engines: u32::MAX as usize,
        ..SimConfig::default()
    };
    let s = Setting {
        base: &base,
        node_bandwidth: 20e9,
        node_latency: 0.0,
        choice: &Choice::default(),
        sem: &Semantics::default(),
        cfg: &cfg,
    };
    jobs::run(&jobs::read(path)?, &s)
}

/// On a line of four hosts, job a's message goes from host 0 to 2 and job
/// b's from 1 to 3: both cross the link 1 -> 2, so together each moves its
/// 1 MB at BW / 2, and its slowdown is (2 LAT + 2 MB / BW) / (2 LAT + 1 MB
/// / BW). On hosts {0, 1} and {2, 3} they share nothing: slowdown 1.
#[test]
fn two_jobs_sharing_one_link_slow_down_by_its_share_and_disjoint_ones_not() {
    let f = job_file(
        "share",
        "[[job]]\nname = \"a\"\ntrace = \"msg.txt\"\nhosts = [0, 2]\n\n\
         [[job]]\nname = \"b\"\ntrace = \"msg.txt\"\nhosts = [1, 3]\n",
    );
    let r = priced(&f, "mesh:4").unwrap();
    let alone = 2.0 * LAT + 1e6 / BW;
    let together = 2.0 * LAT + 2e6 / BW;
    for j in &r.jobs {
        close(j.alone_s, alone);
        close(j.together_s, together);
        close(j.slowdown, together / alone);
    }
    assert_eq!(r.shared.len(), 1, "{:?}", r.shared);
    assert_eq!(r.shared[0].users, ["a", "b"]);
    assert_eq!(
        (r.shared[0].from.as_str(), r.shared[0].to.as_str()),
        ("(1)", "(2)")
    );
    let f = job_file(
        "apart",
        "[[job]]\ntrace = \"msg.txt\"\nhosts = [0, 1]\n\n\
         [[job]]\ntrace = \"msg.txt\"\nhosts = [\"(2)\", \"(3)\"]\n",
    );
    let r = priced(&f, "mesh:4").unwrap();
    for j in &r.jobs {
        close(j.alone_s, LAT + 1e6 / BW);
        assert_eq!(j.slowdown, 1.0, "{}", j.name);
    }
    assert!(r.shared.is_empty());
    assert_eq!(r.jobs[1].name, "job 2");
}

/// A job that starts when the other has finished shares its link with no
/// one at the time: slowdown 1, and its ranks finish after its start.
#[test]
fn a_job_started_after_the_other_ends_is_not_slowed() {
    let f = job_file(
        "start",
        "[[job]]\ntrace = \"msg.txt\"\nhosts = [0, 2]\n\n\
         [[job]]\ntrace = \"msg.txt\"\nhosts = [1, 3]\nstart = 0.0015\n",
    );
    let r = priced(&f, "mesh:4").unwrap();
    let alone = 2.0 * LAT + 1e6 / BW;
    close(r.jobs[1].together_s, alone);
    close(r.jobs[1].slowdown, 1.0);
    close(r.time_s, 0.0015 + alone);
    // The links they use are the same: shared, though never at once.
    assert_eq!(r.shared.len(), 1);
}

/// Background traffic: a permutation of two hosts at full load sends on
/// the link job a's message needs, so the job takes longer together.
#[test]
fn background_traffic_on_a_jobs_link_slows_it() {
    let f = job_file(
        "bg",
        "[[job]]\nname = \"a\"\ntrace = \"msg.txt\"\nhosts = [0, 1]\n\n\
         [[background]]\npattern = \"permutation\"\nhosts = [0, 1]\nload = 1.0\n\
         message = \"100KB\"\nduration = 0.002\n",
    );
    let r = priced(&f, "mesh:2").unwrap();
    assert!(r.jobs[0].slowdown > 1.5, "{:?}", r.jobs[0]);
    assert_eq!(r.background_ranks, 2);
    assert_eq!(r.shared[0].users, ["a", "background"]);
}

/// Placements that overlap or name a host the network lacks, and `auto`
/// for a job, are refused in one line naming the job file and the job's
/// line.
#[test]
fn overlapping_or_unknown_placements_are_refused() {
    let cases = [
        (
            "[[job]]\ntrace = \"msg.txt\"\nhosts = [0, 1]\n[[job]]\nname = \"b\"\ntrace = \"msg.txt\"\nhosts = [1, 2]\n",
            ":4:",
            "job 'b' is placed on host '(1)', which job 'job 1' is placed on already",
        ),
        (
            "[[job]]\ntrace = \"msg.txt\"\nhosts = [0, 7]\n",
            ":1:",
            "host '7' is not one of the network's 4 hosts",
        ),
        (
            "[[job]]\ntrace = \"msg.txt\"\n",
            ":1:",
            "a job needs its hosts",
        ),
        ("[[job]]\ntrace = \"msg.txt\"\nhosts = [0, 1]\nwhen = 3\n", ":4:", "unknown field `when`"),
        (
            "[[job]]\ntrace = \"msg.txt\"\nhosts = [0, 1]\nalgorithm = \"allreduce=auto\"\n",
            ":1:",
            "auto chooses for the whole network",
        ),
    ];
    for (i, (toml, at, what)) in cases.into_iter().enumerate() {
        let f = job_file(&format!("bad{i}"), toml);
        let e = priced(&f, "mesh:4").unwrap_err();
        assert!(matches!(e.base(), Some(Error::Parse { .. })), "{e:?}");
        let text = e.to_string();
        let want = format!("{}{at}", f.display());
        assert!(text.starts_with(&want) && text.contains(what), "{text}");
        assert!(!text.contains('\n'), "{text}");
    }
}
