//! SimGrid's own example platforms (tests/data/simgrid-platforms, from
//! simgrid/simgrid `examples/platforms/`): every one loads and simulates a
//! collective, or is refused in one line naming the element where it needs
//! the Wifi, ns-3 or Vivaldi model. Their times against SMPI:
//! `validation/simgrid/run.sh --platforms` (docs/VALIDATION.md). And each
//! bad platform the fuzzing found, refused at its root.

use std::path::PathBuf;
use topocoll::algorithms::Request;
use topocoll::schedule::{Collective, Dtype, ReduceOp};
use topocoll::sim::{simulate, SimConfig};
use topocoll::topology::{parse_platform, RankMap, Topology};

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/simgrid-platforms")
}

/// A binomial bcast of 64 KiB on the topology's ranks: its time, or why not.
fn bcast(t: &Topology) -> Result<f64, String> {
    let req = Request::new(
        Collective::Bcast { root: 0 },
        t.num_ranks(),
        65536,
        Dtype::U8,
        ReduceOp::Sum,
        Some(t),
    )
    .map_err(|e| e.to_string())?;
    let s = topocoll::algorithms::build(&topocoll::algorithms::bcast::binomial::ALGORITHM, &req)
        .map_err(|e| e.to_string())?;
    simulate(&s, t, &SimConfig::default())
        .map(|r| r.time_s)
        .map_err(|e| e.to_string())
}

/// The files refused, and what the refusal names.
const REFUSED: &[(&str, &str)] = &[
    ("cloud.xml", "Vivaldi"),
    ("data_center.xml", "Vivaldi"),
    ("vivaldi.xml", "Vivaldi"),
    ("two_peers.xml", "Vivaldi"),
    ("wifi.xml", "Wifi"),
    ("wifi_energy.xml", "Wifi"),
    ("wifi_large_cell.xml", "Wifi"),
    ("wifi_ns3.xml", "WIFI"),
];

#[test]
fn every_example_platform_loads_and_simulates_or_is_refused_by_name() {
    let mut files: Vec<_> = std::fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "xml"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 50);
    let mut simulated = 0;
    for path in &files {
        let name = path.file_name().unwrap().to_str().unwrap();
        let text = std::fs::read_to_string(path).unwrap();
        // By its path: a profile's file is read from the platform's folder.
        let loaded = parse_platform(path.to_str().unwrap(), &text);
        if let Some((_, want)) = REFUSED.iter().find(|(f, _)| *f == name) {
            let e = loaded.expect_err(name).to_string();
            assert_eq!(e.lines().count(), 1, "{e}");
            assert!(
                e.contains(want) && e.contains(name) && e.contains("line "),
                "{e}"
            );
            continue;
        }
        let mut t = loaded.unwrap_or_else(|e| panic!("{name}: {e}"));
        let time = match bcast(&t) {
            Ok(time) => time,
            Err(e) => {
                // SimGrid loads these too, and stops at the first pair
                // without a route, or where a host that turns off kills
                // its rank: so does topocoll, naming it. Hosts with a
                // route and no state profile simulate.
                assert!(
                    e.contains("no route from") || e.contains("turns off at"),
                    "{name}: {e}"
                );
                let stays_on = |n: u32| {
                    t.profiles.as_deref().is_none_or(|p| {
                        !p.of.iter().any(|(target, _)| {
                            *target == topocoll::topology::profile::Target::HostState(n)
                        })
                    })
                };
                let on: Vec<usize> = (0..t.num_ranks())
                    .filter(|&r| stays_on(t.rank_node[r]))
                    .collect();
                let hosts: Vec<String> = on.iter().map(|&r| t.node_name(t.rank_node[r])).collect();
                let pair = hosts.iter().enumerate().find_map(|(i, a)| {
                    hosts[i + 1..]
                        .iter()
                        .find(|b| {
                            let rank = |h: &String| on[hosts.iter().position(|x| x == h).unwrap()];
                            t.route_problem(rank(a), rank(b)).is_none()
                        })
                        .map(|b| vec![a.clone(), b.clone()])
                });
                let map = RankMap::List(pair.unwrap_or_else(|| vec![hosts[0].clone()]));
                t.place_ranks(1, &map, 1e9, 0.0).unwrap();
                bcast(&t).unwrap_or_else(|e| panic!("{name}: {e}"))
            }
        };
        assert!(time.is_finite() && time >= 0.0, "{name}: {time}");
        simulated += 1;
    }
    assert_eq!(simulated, 50 - REFUSED.len());
}

/// SimGrid's figures for these platforms (validation/simgrid/run.sh
/// --platforms, SMPI 3.32, CM02), reproduced with run.sh's model.
#[test]
fn smpi_times_on_example_platforms_are_reproduced() {
    let cfg = crate::sim::simgrid_config_for_platforms();
    for (file, want) in [
        ("cluster_backbone.xml", 8.919744e-03),
        ("cluster_multi.xml", 6.622080e-03),
        ("routing_cluster.xml", 5.673248e-03),
        ("bypassRoute.xml", 4.125031e-03),
        ("small_platform.xml", 4.751873e-02),
        ("three_multicore_hosts.xml", 1.248832e-03),
    ] {
        let text = std::fs::read_to_string(dir().join(file)).unwrap();
        let t = parse_platform(file, &text).unwrap();
        let req = Request::new(
            Collective::Bcast { root: 0 },
            t.num_ranks(),
            65536,
            Dtype::U8,
            ReduceOp::Sum,
            Some(&t),
        )
        .unwrap();
        let s =
            topocoll::algorithms::build(&topocoll::algorithms::bcast::binomial::ALGORITHM, &req)
                .unwrap();
        let got = simulate(&s, &t, &cfg).unwrap().time_s;
        assert!(
            (got - want).abs() <= 1e-6 * want,
            "{file}: {got} vs SMPI {want}"
        );
    }
}

fn refused(text: &str, want: &str) {
    let e = parse_platform("bad.xml", text).expect_err(text).to_string();
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(
        e.contains(want) && e.contains("bad.xml") && e.contains("line "),
        "{text}: {e}"
    );
}

fn cluster(extra: &str) -> String {
    format!(
        r#"<platform version="4.1"><zone id="w" routing="Full"><cluster id="c" prefix="n" suffix="" radical="0-15" speed="1Gf" {extra}/></zone></platform>"#
    )
}

#[test]
fn every_bandwidth_and_latency_is_range_checked_whatever_the_element() {
    for topo in [
        r#"topology="FAT_TREE" topo_parameters="2;4,4;1,2;1,2""#,
        r#"topology="DRAGONFLY" topo_parameters="2,1;2,2;2,1;2""#,
        r#"topology="TORUS" topo_parameters="4,4""#,
        "",
    ] {
        for (bw, lat, want) in [
            ("-1Bps", "1us", "bandwidth"),
            ("NaNBps", "1us", "bandwidth"),
            ("infBps", "1us", "bandwidth"),
            ("1e30Bps", "1us", "bandwidth"),
            ("1GBps", "-1s", "latency"),
            ("1GBps", "1e12s", "latency"),
        ] {
            refused(&cluster(&format!(r#"{topo} bw="{bw}" lat="{lat}""#)), want);
        }
    }
    let zone = |lat: &str| {
        format!(
            r#"<platform version="4.1"><zone id="z" routing="Full"><host id="a" speed="1f"/><host id="b" speed="1f"/><link id="l" bandwidth="1GBps" latency="{lat}"/><route src="a" dst="b"><link_ctn id="l"/></route></zone></platform>"#
        )
    };
    refused(&zone("-1s"), "latency");
    refused(&zone("1e12s"), "latency");
    refused(
        &cluster(r#"bw="1GBps" lat="1us" bb_bw="-5Bps""#),
        "bandwidth",
    );
    refused(
        &cluster(r#"bw="1GBps" lat="1us" limiter_link="0Bps""#),
        "bandwidth",
    );
    // SimGrid's unit parser takes a bare zero (and any bare number).
    assert!(parse_platform("ok.xml", &zone("0")).is_ok());
}

#[test]
fn cluster_attributes_are_checked_before_the_work_they_bound() {
    refused(
        &cluster(r#"bw="1GBps" lat="1us" sharing_policy="bogus""#),
        "sharing_policy 'bogus'",
    );
    refused(
        &cluster(r#"bw="1GBps" lat="1us" sharing_policy="WIFI""#),
        "sharing_policy 'WIFI'",
    );
    let huge = cluster(r#"bw="1GBps" lat="1us""#).replace("0-15", "1-18446744073709551615");
    refused(&huge, "more than");
    let many = cluster(r#"bw="1GBps" lat="1us""#).replace("0-15", "0-30000000");
    let t0 = std::time::Instant::now();
    refused(&many, "more than");
    assert!(t0.elapsed().as_secs_f64() < 1.0);
}

#[test]
fn what_simgrid_accepts_is_read() {
    // A TORUS without sharing_policy (SimGrid's default SPLITDUPLEX), with
    // a dimension of 2.
    let t = parse_platform(
        "t.xml",
        &cluster(r#"topology="TORUS" topo_parameters="4,2,2" bw="1GBps" lat="1us""#),
    )
    .unwrap();
    assert_eq!(t.num_ranks(), 16);
    // More hosts than a table of every pair would hold: 65,536 in a flat
    // cluster, routed pair by pair.
    let big = cluster(r#"bw="125MBps" lat="50us""#).replace("0-15", "0-65535");
    let t = parse_platform("big.xml", &big).unwrap();
    assert_eq!(t.num_ranks(), 65536);
    let mut out = Vec::new();
    t.route(0, 65535, &mut out);
    let names: Vec<String> = out.iter().map(|&l| t.link_name(l)).collect();
    assert_eq!(names, ["c_link_0_UP", "c_link_65535_DOWN"]);
    // A FATPIPE link does not share: two flows across it each take its
    // whole bandwidth.
    let fat = r#"<platform version="4.1"><zone id="z" routing="Full">
<host id="a" speed="1f"/><host id="b" speed="1f"/><host id="c" speed="1f"/><host id="d" speed="1f"/>
<link id="f" bandwidth="1GBps" sharing_policy="FATPIPE"/>
<route src="a" dst="b"><link_ctn id="f"/></route><route src="c" dst="d"><link_ctn id="f"/></route>
<route src="a" dst="c"><link_ctn id="f"/></route><route src="a" dst="d"><link_ctn id="f"/></route>
<route src="b" dst="c"><link_ctn id="f"/></route><route src="b" dst="d"><link_ctn id="f"/></route>
</zone></platform>"#;
    let t = parse_platform("fat.xml", fat).unwrap();
    assert_eq!(t.fatpipe(), [true]);
    let req = Request::new(
        Collective::Alltoall,
        4,
        1 << 20,
        Dtype::U8,
        ReduceOp::Sum,
        Some(&t),
    )
    .unwrap();
    let s = topocoll::algorithms::build(&topocoll::algorithms::alltoall::pairwise::ALGORITHM, &req)
        .unwrap();
    let time = simulate(&s, &t, &SimConfig::default()).unwrap().time_s;
    // Three steps of 2^20 bytes at the full 1 GB/s each.
    assert!((time - 3.0 * 1048576.0 / 1e9).abs() < 1e-9, "{time}");
}

/// Floyd and Dijkstra zones route the shortest way over the declared
/// routes (by links), here the same way.
#[test]
fn floyd_and_dijkstra_zones_take_the_shortest_declared_way() {
    let zone = |routing: &str| {
        format!(
            r#"<platform version="4.1"><zone id="z" routing="{routing}">
<host id="a" speed="1f"/><host id="b" speed="1f"/><router id="r1"/><router id="r2"/><router id="r3"/>
<link id="l1" bandwidth="1GBps"/><link id="l2" bandwidth="1GBps"/><link id="l3" bandwidth="1GBps"/>
<link id="l4" bandwidth="1GBps"/><link id="l5" bandwidth="1GBps" sharing_policy="SPLITDUPLEX"/>
<route src="a" dst="r1"><link_ctn id="l1"/></route><route src="r1" dst="r2"><link_ctn id="l2"/></route>
<route src="r2" dst="r3"><link_ctn id="l3"/></route><route src="r3" dst="b"><link_ctn id="l4"/></route>
<route src="r1" dst="b"><link_ctn id="l5" direction="UP"/></route>
</zone></platform>"#
        )
    };
    for routing in ["Floyd", "Dijkstra", "DijkstraCache"] {
        let t = parse_platform("z.xml", &zone(routing)).unwrap();
        let names = |a: usize, b: usize| {
            let mut out = Vec::new();
            t.route(a, b, &mut out);
            out.iter().map(|&l| t.link_name(l)).collect::<Vec<_>>()
        };
        assert_eq!(names(0, 1), ["l1", "l5_UP"], "{routing}");
        assert_eq!(names(1, 0), ["l5_DOWN", "l1"], "{routing}");
    }
}

/// A platform's profiles are read onto its links and hosts: files from
/// the platform's folder, `<trace>`s connected by `<trace_connect>`; bad
/// ones are refused in one line naming the element's line.
#[test]
fn profiles_are_read_onto_links_and_hosts_and_bad_ones_refused() {
    use topocoll::topology::profile::Target;
    let path = dir().join("small_platform_profile.xml");
    let text = std::fs::read_to_string(&path).unwrap();
    let t = parse_platform(path.to_str().unwrap(), &text).unwrap();
    let p = t.profiles.as_deref().unwrap();
    let mut named: Vec<String> =
        p.of.iter()
            .map(|(target, _)| match *target {
                Target::Bandwidth(l) => format!("bandwidth {}", t.link_name(l)),
                Target::Latency(l) => format!("latency {}", t.link_name(l)),
                Target::Speed(n) => format!("speed {}", t.node_name(n)),
                Target::State(l) => format!("state {}", t.link_name(l)),
                Target::HostState(n) => format!("state {}", t.node_name(n)),
            })
            .collect();
    named.sort();
    assert_eq!(named, ["bandwidth 1", "latency 1", "speed Jupiter"]);
    let platform = |traces: &str, connect: &str| {
        format!(
            r#"<platform version="4.1">{traces}<zone id="z" routing="Full"><host id="a" speed="1Gf"/><host id="b" speed="1Gf"/><link id="l" bandwidth="1GBps" latency="1us"/><route src="a" dst="b"><link_ctn id="l"/></route></zone>{connect}</platform>"#
        )
    };
    let inline = platform(
        "<trace id=\"t\" periodicity=\"4\">0 1e9\n2 5e8\n</trace>",
        r#"<trace_connect kind="BANDWIDTH" trace="t" element="l"/>"#,
    );
    let t = parse_platform("inline.xml", &inline).unwrap();
    assert_eq!(t.profiles.as_deref().unwrap().of.len(), 1);
    // States: `state_file` on hosts and links, `HOST_AVAIL` and
    // `LINK_AVAIL` connections.
    let states = |file: &str| {
        let path = dir().join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        let t = parse_platform(path.to_str().unwrap(), &text).unwrap();
        let mut named: Vec<String> = t
            .profiles
            .as_deref()
            .unwrap()
            .of
            .iter()
            .filter_map(|(target, _)| match *target {
                Target::State(l) => Some(format!("link {}", t.link_name(l))),
                Target::HostState(n) => Some(format!("host {}", t.node_name(n))),
                _ => None,
            })
            .collect();
        named.sort();
        named
    };
    assert_eq!(
        states("small_platform_failures.xml"),
        [
            "host Fafard",
            "host Ginette",
            "host Jupiter",
            "link 3",
            "link 4"
        ]
    );
    assert_eq!(
        states("two_hosts_platform_with_availability_included.xml"),
        ["host Cpu A"]
    );
    let linked = platform(
        "<trace id=\"t\">1 0\n2 1\n</trace>",
        r#"<trace_connect kind="LINK_AVAIL" trace="t" element="l"/>"#,
    );
    let t = parse_platform("inline.xml", &linked).unwrap();
    assert!(matches!(
        t.profiles.as_deref().unwrap().of[..],
        [(Target::State(_), _)]
    ));
    for (traces, connect, want) in [
        (
            "<trace id=\"t\">2 1\n1 1\n</trace>",
            "",
            "line 2: date 1 comes before",
        ),
        (
            "",
            r#"<trace_connect kind="SPEED" trace="x" element="a"/>"#,
            "trace 'x' is not declared",
        ),
        (
            "<trace id=\"t\">0 1\n</trace>",
            r#"<trace_connect kind="SPEED" trace="t" element="zz"/>"#,
            "host 'zz' is not one of the network's",
        ),
        (
            "<trace id=\"t\">0 1\n</trace>",
            r#"<trace_connect kind="POWER" trace="t" element="a"/>"#,
            "kind 'POWER'",
        ),
        (
            "<trace id=\"t\">0 1\n3 0\n</trace>",
            r#"<trace_connect kind="SPEED" trace="t" element="a"/>"#,
            "a speed profile's values must be positive",
        ),
        (
            "<trace id=\"t\" periodicity=\"5\">0 0\n</trace>",
            r#"<trace_connect kind="BANDWIDTH" trace="t" element="l"/>"#,
            "a bandwidth profile's values must be positive",
        ),
    ] {
        refused(&platform(traces, connect), want);
    }
    refused(
        &platform("", "").replace(
            "latency=\"1us\"",
            "latency=\"1us\" bandwidth_file=\"no-such.profile\"",
        ),
        "cannot read profile 'no-such.profile'",
    );
}
