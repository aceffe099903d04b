//! The committed traces of real applications (NAS IS, EP and DT, HPCG, recorded
//! by SimGrid's tracer) replayed on SimGrid's own platforms, held to the
//! times SimGrid 3.32's replay gives them (`tests/data/traces/simgrid-times.tsv`,
//! written by `validation/simgrid/run.sh --replay --record`), under CM02 on
//! both sides and the same algorithms.

use std::path::{Path, PathBuf};
use topocoll_sim::{Fairness, SimConfig};
use topocoll_topology::{parse_spec, RankMap, Topology};
use topocoll_workload::{read, replay_trace, Choice, Replayed, Semantics};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data")
}

/// SimGrid's CM02 as `validation/simgrid` sets it (docs/VALIDATION.md).
fn cm02() -> SimConfig {
    SimConfig {
        engines: u32::MAX as usize,
        fairness: Fairness::Rtt,
        header_bytes: 16,
        rendezvous: true,
        tcp_window: Some(4_194_304.0),
        ..SimConfig::default()
    }
}

/// SimGrid's default model, SMPI's, with SimGrid's `options` over it.
fn smpi(options: &[(&str, &str)]) -> SimConfig {
    let mut cfg = SimConfig {
        engines: u32::MAX as usize,
        ..SimConfig::default()
    };
    topocoll_sim::simgrid::configure(&mut cfg, options).unwrap();
    cfg
}

/// The model a TSV row names: `CM02` ([`cm02`]), or SMPI's ([`smpi`]).
fn model(name: &str) -> SimConfig {
    match name {
        "CM02" => cm02(),
        _ => smpi(&[]),
    }
}

/// The platform in file `xml` with the trace's ranks on `hosts`, in rank
/// order, as the hostfile SimGrid ran with.
fn placed(xml: &Path, hosts: Vec<String>) -> Topology {
    let mut topo = parse_spec(xml.to_str().unwrap()).unwrap();
    topo.place_ranks(1, &RankMap::List(hosts), 20e9, 0.0)
        .unwrap();
    topo
}

/// The platform in file `xml` with `ranks` ranks on its first hosts in
/// topocoll's rank order (`validation/simgrid/hosts.py`'s hostfile).
fn on_first_hosts(xml: &Path, ranks: usize) -> Topology {
    let topo = parse_spec(xml.to_str().unwrap()).unwrap();
    let hosts = (0..ranks)
        .map(|r| topo.node_name(topo.rank_node[r]))
        .collect();
    placed(xml, hosts)
}

/// The replay of the trace file `path` on `topo` under `cfg`.
fn replay_file(path: &Path, topo: &Topology, choice: &Choice, cfg: &SimConfig) -> Replayed {
    let t = read(path).unwrap();
    replay_trace(&t, topo, choice, &Semantics::default(), cfg).unwrap()
}

/// The trace's algorithms, from its `cfg` file of SimGrid options.
fn choice(dir: &Path) -> Choice {
    let text = std::fs::read_to_string(dir.join("cfg")).unwrap();
    let mut c = Choice::default();
    for opt in text.split_whitespace() {
        let (key, value) = opt.strip_prefix("--cfg=").unwrap().split_once(':').unwrap();
        c.simgrid_option(key, value, &[]).unwrap();
    }
    c
}

/// Replays `trace` on the first `ranks` hosts of SimGrid's `platform`
/// under CM02.
fn replayed(trace: &str, platform: &str, ranks: usize) -> f64 {
    replayed_under(trace, platform, ranks, &cm02())
}

/// Replays `trace` on the first `ranks` hosts of SimGrid's `platform`
/// under `cfg`.
fn replayed_under(trace: &str, platform: &str, ranks: usize, cfg: &SimConfig) -> f64 {
    let dir = data().join("traces").join(trace);
    replayed_with(trace, platform, ranks, cfg, &choice(&dir))
}

/// Replays `trace` on the first `ranks` hosts of SimGrid's `platform`
/// under `cfg`, its collectives served as `choice` says.
fn replayed_with(
    trace: &str,
    platform: &str,
    ranks: usize,
    cfg: &SimConfig,
    choice: &Choice,
) -> f64 {
    let dir = data().join("traces").join(trace);
    let xml = data().join(format!("simgrid-platforms/{platform}.xml"));
    let topo = on_first_hosts(&xml, ranks);
    replay_file(&dir.join("index.txt"), &topo, choice, cfg)
        .result
        .time_s
}

/// LULESH's trace, which SimGrid's replay refuses, against SimGrid's live
/// run of LULESH itself.
#[test]
fn luleshs_trace_replays_to_simgrids_live_time_within_one_percent() {
    let times = std::fs::read_to_string(data().join("traces/simgrid-live-times.tsv")).unwrap();
    for line in times.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        let want: f64 = f[3].parse().unwrap();
        let got = replayed(f[0], f[1], f[2].parse().unwrap());
        assert!(
            (got / want - 1.0).abs() < 0.01,
            "{}: topocoll {got:e} s, SimGrid live {want:e} s",
            f[0]
        );
    }
}

#[test]
fn application_traces_replay_to_simgrids_times_within_one_percent() {
    let times = std::fs::read_to_string(data().join("traces/simgrid-times.tsv")).unwrap();
    let mut rows = 0;
    let mut traces = std::collections::BTreeSet::new();
    let mut platforms = std::collections::BTreeSet::new();
    for line in times.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        let (trace, platform, ranks, want) = (
            f[0],
            f[1],
            f[2].parse::<usize>().unwrap(),
            f[3].parse::<f64>().unwrap(),
        );
        let got = replayed(trace, platform, ranks);
        let ratio = got / want;
        assert!(
            (ratio - 1.0).abs() < 0.01,
            "{trace} on {platform}: topocoll {got:e} s, SimGrid {want:e} s ({ratio:.4})"
        );
        rows += 1;
        traces.insert(trace.get(..6).unwrap_or(trace).to_string());
        platforms.insert(platform.to_string());
    }
    assert!(
        rows >= 9 && traces.len() >= 3 && platforms.len() >= 3,
        "{rows} rows, {traces:?}, {platforms:?}"
    );
}

/// The same traces and platforms under SimGrid's default model, SMPI's
/// (`--simgrid`: its bandwidth and latency factors, weight-S, and
/// cross-traffic on and off), held to SimGrid 3.32's replay under it
/// (`traces/simgrid-smpi-times.tsv`, `validation/simgrid/run.sh --replay`).
#[test]
fn application_traces_replay_to_simgrids_smpi_times_within_one_percent() {
    let times = std::fs::read_to_string(data().join("traces/simgrid-smpi-times.tsv")).unwrap();
    let mut rows = [0; 2];
    for line in times.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        let (trace, platform, ranks, crosstraffic, want) = (
            f[0],
            f[1],
            f[2].parse::<usize>().unwrap(),
            f[3] == "1",
            f[4].parse::<f64>().unwrap(),
        );
        let off = [("network/crosstraffic", "0")];
        let options: &[(&str, &str)] = if crosstraffic { &[] } else { &off };
        let got = replayed_under(trace, platform, ranks, &smpi(options));
        let ratio = got / want;
        assert!(
            (ratio - 1.0).abs() < 0.01,
            "{trace} on {platform}, crosstraffic {crosstraffic}: topocoll {got:e} s, SimGrid {want:e} s ({ratio:.4})"
        );
        rows[usize::from(crosstraffic)] += 1;
    }
    assert!(rows[0] >= 9 && rows[1] >= 9, "{rows:?}");
}

/// The same traces with no algorithm chosen on either side: SimGrid's
/// default selector (a linear reduce, a linear reduce then binomial bcast
/// for the allreduce, Open MPI's choice among its alltoalls) against
/// topocoll's defaults, under CM02 and SMPI's model
/// (`traces/simgrid-default-times.tsv`, `validation/simgrid/run.sh --replay`).
#[test]
fn application_traces_replay_to_simgrids_times_under_its_default_algorithms() {
    let times = std::fs::read_to_string(data().join("traces/simgrid-default-times.tsv")).unwrap();
    let mut rows = [0; 2];
    for line in times.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        let (trace, platform, ranks, model_name, want) = (
            f[0],
            f[1],
            f[2].parse::<usize>().unwrap(),
            f[3],
            f[4].parse::<f64>().unwrap(),
        );
        let cfg = model(model_name);
        let got = replayed_with(trace, platform, ranks, &cfg, &Choice::default());
        let ratio = got / want;
        assert!(
            (ratio - 1.0).abs() < 0.01,
            "{trace} on {platform} under {model_name}: topocoll {got:e} s, SimGrid {want:e} s ({ratio:.4})"
        );
        rows[usize::from(model_name == "CM02")] += 1;
    }
    assert!(rows[0] >= 19 && rows[1] >= 19, "{rows:?}");
}

/// SimGrid's default selector collective by collective, one shared trace a
/// case on griffon and cluster_backbone under both models: the allreduce
/// (small and large), bcast and reduce, the allgather, gather, scatter and
/// barrier, the reduce_scatter, and the alltoall at each of Open MPI's
/// picks (bruck on 32 ranks of 64 bytes, pair on 4 and 64 ranks of large
/// blocks, basic_linear on 8). topocoll's defaults serve each call with
/// the algorithm the file names and replay to SimGrid's time
/// (`traces/defaults/simgrid-times.tsv`).
#[test]
fn each_collective_under_simgrids_default_selector_replays_to_its_time() {
    let dir = data().join("traces/defaults");
    let times = std::fs::read_to_string(dir.join("simgrid-times.tsv")).unwrap();
    let mut served = std::collections::BTreeSet::new();
    for line in times.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        let (trace, platform, ranks, model_name, want, algs) = (
            f[0],
            f[1],
            f[2].parse::<usize>().unwrap(),
            f[3],
            f[4].parse::<f64>().unwrap(),
            f[5],
        );
        let xml = data().join(format!("simgrid-platforms/{platform}.xml"));
        let topo = on_first_hosts(&xml, ranks);
        let file = dir.join(format!("{trace}.txt"));
        let r = replay_file(&file, &topo, &Choice::default(), &model(model_name));
        let got_algs: Vec<String> = r
            .calls
            .iter()
            .map(|c| {
                served.insert((c.collective.kind().name(), c.algorithm));
                c.algorithm.to_string()
            })
            .collect();
        assert_eq!(got_algs.join(","), algs, "{trace}");
        let got = r.result.time_s;
        assert!(
            (got / want - 1.0).abs() < 1e-6,
            "{trace} on {platform} under {model_name}: topocoll {got:e} s, SimGrid {want:e} s"
        );
    }
    assert!(served.len() >= 11, "{served:?}");
}

/// SimGrid's algorithm names that map onto topocoll's beyond those the NAS
/// traces use, each in a shared trace `COLLECTIVE-NAME-RANKS.txt` on
/// griffon, chosen by `--cfg=smpi/COLLECTIVE:NAME` on both sides, under
/// both models (`traces/named/simgrid-times.tsv`): within 1e-5 of
/// SimGrid's time.
#[test]
fn simgrids_named_algorithms_replay_to_its_times() {
    let dir = data().join("traces/named");
    let times = std::fs::read_to_string(dir.join("simgrid-times.tsv")).unwrap();
    let xml = data().join("simgrid-platforms/griffon.xml");
    let mut rows = 0;
    for line in times.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        let (trace, ranks, model_name, want) = (
            f[0],
            f[2].parse::<usize>().unwrap(),
            f[3],
            f[4].parse::<f64>().unwrap(),
        );
        let (coll, rest) = trace.split_once('-').unwrap();
        let name = rest.rsplit_once('-').unwrap().0;
        let mut choice = Choice::default();
        choice
            .simgrid_option(&format!("smpi/{coll}"), name, &[])
            .unwrap();
        let topo = on_first_hosts(&xml, ranks);
        let file = dir.join(format!("{trace}.txt"));
        let got = replay_file(&file, &topo, &choice, &model(model_name))
            .result
            .time_s;
        assert!(
            (got / want - 1.0).abs() < 1e-5,
            "{trace} under {model_name}: topocoll {got:e} s, SimGrid {want:e} s"
        );
        rows += 1;
    }
    assert!(rows >= 18, "{rows} rows");
}

/// Two small platforms written for the check (`traces/platforms`): Floyd
/// routes over links of unlike bandwidths and latencies, and hosts on shared
/// links behind a FATPIPE switch. SimGrid's ring allreduce (`lr`) at 64 KiB,
/// whose blocks go eagerly, and at 1 MiB, a pairwise alltoall and a ring of
/// send-receives replay to SimGrid's times under both models.
#[test]
fn eager_rings_on_unlike_links_replay_to_simgrids_times() {
    let dir = data().join("traces/platforms");
    let times = std::fs::read_to_string(dir.join("simgrid-times.tsv")).unwrap();
    let mut rows = 0;
    for line in times.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        let (trace, platform, model_name, want) = (f[0], f[1], f[2], f[3].parse::<f64>().unwrap());
        let mut choice = Choice::default();
        if trace.starts_with("allreduce") {
            choice.simgrid_option("smpi/allreduce", "lr", &[]).unwrap();
        } else if trace.starts_with("alltoall") {
            choice.simgrid_option("smpi/alltoall", "pair", &[]).unwrap();
        }
        let xml = dir.join(format!("{platform}.xml"));
        let topo = placed(&xml, (0..4).map(|h| format!("h{h}")).collect());
        let file = dir.join(format!("{trace}.txt"));
        let got = replay_file(&file, &topo, &choice, &model(model_name))
            .result
            .time_s;
        assert!(
            (got / want - 1.0).abs() < 1e-6,
            "{trace} on {platform} under {model_name}: topocoll {got:e} s, SimGrid {want:e} s"
        );
        rows += 1;
    }
    assert_eq!(rows, 16);
}

/// The trace of `tests/data/communicators/comm-split4` on the first 4 hosts
/// of SimGrid's cluster_backbone: SimGrid's recording (every call on the
/// world) against `smpirun -replay`'s time, and the same lines with their
/// communicators against SimGrid's live run less its live run of the split
/// alone (`simgrid-times.tsv`, written by validation/simgrid/communicators.sh).
#[test]
fn a_trace_with_communicators_replays_to_simgrids_times() {
    let dir = data().join("communicators/comm-split4");
    let times = std::fs::read_to_string(dir.join("simgrid-times.tsv")).unwrap();
    let sg = |run: &str| -> f64 {
        let line = times.lines().find(|l| l.starts_with(run)).unwrap();
        line.split('\t').nth(3).unwrap().parse().unwrap()
    };
    let topo = on_first_hosts(&data().join("simgrid-platforms/cluster_backbone.xml"), 4);
    let time = |index: &Path| {
        replay_file(index, &topo, &choice(&dir), &cm02())
            .result
            .time_s
    };
    let recorded = time(&dir.join("recorded/index.txt"));
    let want = sg("replay of recorded");
    assert!(
        (recorded / want - 1.0).abs() < 1e-6,
        "{recorded:e} s, SimGrid {want:e} s"
    );
    let with_comms = time(&dir.join("index.txt"));
    let want = sg("live comm_split") - sg("live split_only");
    assert!(
        (with_comms / want - 1.0).abs() < 1e-4,
        "{with_comms:e} s, SimGrid {want:e} s"
    );
}

/// A workload on a network that changes while it runs (SimGrid's
/// `small_platform_profile.xml`: Jupiter's speed, link 1's bandwidth and
/// latency follow their profiles), held to SimGrid 3.32's replay under
/// both network models (`tests/data/profiles`).
#[test]
fn a_trace_on_a_platform_that_changes_replays_to_simgrids_times() {
    let dir = data().join("profiles/pingpong");
    let times = std::fs::read_to_string(dir.join("simgrid-times.tsv")).unwrap();
    let xml = data().join("simgrid-platforms/small_platform_profile.xml");
    let topo = placed(&xml, vec!["Jupiter".to_string(), "Fafard".to_string()]);
    assert!(topo.profiles.is_some());
    let t = read(&dir.join("index.txt")).unwrap();
    for line in times.lines().skip(1) {
        let (model, want) = line.split_once('\t').unwrap();
        let want: f64 = want.parse().unwrap();
        let cm02 = [("network/model", "CM02"), ("network/crosstraffic", "0")];
        let options: &[(&str, &str)] = if model == "CM02" { &cm02 } else { &[] };
        let got = replay_trace(
            &t,
            &topo,
            &Choice::default(),
            &Semantics::default(),
            &smpi(options),
        )
        .unwrap()
        .result
        .time_s;
        assert!(
            (got / want - 1.0).abs() < 1e-6,
            "{model}: topocoll {got:e} s, SimGrid {want:e} s"
        );
    }
}

/// SimGrid's `small_platform_failures.xml`, whose links and hosts turn off
/// and on: a replay that meets no failure (a link back on before the send)
/// gives SimGrid's time under both models; one that meets a failure stops
/// at the date SimGrid's aborts, naming the link or host, in one line
/// (`tests/data/traces/failures/simgrid.tsv`).
#[test]
fn a_platform_whose_links_and_hosts_turn_off_replays_as_simgrid_does() {
    let dir = data().join("traces/failures");
    let xml = data().join("simgrid-platforms/small_platform_failures.xml");
    let rows = std::fs::read_to_string(dir.join("simgrid.tsv")).unwrap();
    let mut checked = 0;
    for line in rows.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        let hosts: Vec<String> = std::fs::read_to_string(dir.join(f[1]))
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        let topo = placed(&xml, hosts);
        let cfg = match f[2] {
            "CM02" => cm02(),
            _ => smpi(&[]),
        };
        let t = read(&dir.join(format!("{}.txt", f[0]))).unwrap();
        let got = replay_trace(&t, &topo, &Choice::default(), &Semantics::default(), &cfg);
        match f[3].strip_prefix("aborts at ") {
            None => {
                let want: f64 = f[3].parse().unwrap();
                let time = got.unwrap_or_else(|e| panic!("{line}: {e}")).result.time_s;
                assert!(((time - want) / want).abs() < 1e-8, "{line}: {time}");
            }
            Some(at) => {
                let (date, what) = at.split_once(": ").unwrap();
                let (kind, name) = what.split_once(' ').unwrap();
                let e = got.err().unwrap_or_else(|| panic!("{line}: replayed"));
                assert!(
                    matches!(
                        &e,
                        topocoll_workload::Error::Sim(topocoll_sim::Error::Sim {
                            kind: topocoll_sim::SimKind::Failure,
                            ..
                        })
                    ),
                    "{line}: {e:?}"
                );
                let text = e.to_string();
                let at = format!("turns off at {}", date.trim_end_matches(" s"));
                assert!(
                    text.contains(&format!("{kind} '{name}'")) && text.contains(&at),
                    "{line}: {text}"
                );
                assert_eq!(text.lines().count(), 1);
            }
        }
        checked += 1;
    }
    assert_eq!(checked, 7);
}
