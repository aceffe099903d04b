//! SimGrid platform files as topologies: the platform that
//! validation/simgrid/platform.py writes for a torus simulates to the same
//! bits as topocoll's own spec with SimGrid's tie rule; a flat cluster is a
//! tree of hosts on one router; everything else is refused in one line.

mod common;
use common::topocoll;

fn torus_xml(dims: &[usize], bw: &str, lat: &str) -> String {
    let n: usize = dims.iter().product();
    let p: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
    format!(
        r#"<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="world" routing="Full">
    <cluster id="torus" topology="TORUS" topo_parameters="{}"
             prefix="node-" radical="0-{}" suffix=""
             speed="1Gf" bw="{bw}" lat="{lat}"
             sharing_policy="SPLITDUPLEX"
             loopback_bw="1e11Bps" loopback_lat="0s"/>
  </zone>
</platform>
"#,
        p.join(","),
        n - 1
    )
}

fn write(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("topocoll-platform-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

fn time(args: &[&str]) -> f64 {
    let (code, out, err) = topocoll(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    v["time_s"].as_f64().unwrap()
}

#[test]
fn a_simgrid_torus_simulates_to_the_same_bits_as_our_spec() {
    for (dims, spec) in [(vec![8, 8], "torus:8x8"), (vec![4, 4, 4], "torus:4x4x4")] {
        let xml = write(
            &format!("{spec}.xml").replace(':', "_"),
            &torus_xml(&dims, "1e9Bps", "1e-06s"),
        );
        for alg in ["pairwise", "linear", "ring"] {
            let model = [
                "-c",
                "alltoall",
                "-a",
                alg,
                "-s",
                "64KiB",
                "--fairness",
                "rtt",
                "--header-bytes",
                "16",
                "--engines",
                "1",
                "--format",
                "json",
            ];
            let mut a = vec!["simulate", "-t", xml.as_str()];
            a.extend(model);
            let mut b = vec!["simulate", "-t", spec, "--torus-tie", "simgrid"];
            b.extend(model);
            assert_eq!(time(&a).to_bits(), time(&b).to_bits(), "{spec} {alg}");
        }
    }
}

#[test]
fn a_flat_cluster_is_hosts_on_one_router() {
    let xml = write(
        "flat.xml",
        r#"<platform version="4.1"><cluster id="c" prefix="h" suffix="" radical="0-7" speed="1Gf" bw="125MBps" lat="50us"/></platform>"#,
    );
    let (code, out, err) = topocoll(&[
        "simulate", "-t", &xml, "-c", "bcast", "-a", "binomial", "-s", "1MB",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("tree network of 9 nodes (8 hosts)"), "{out}");
    // One MB over one 125 MB/s host link at least: 8 ms.
    let t = time(&[
        "simulate", "-t", &xml, "-c", "bcast", "-a", "binomial", "-s", "1MB", "--format", "json",
    ]);
    assert!(t > 8e-3, "{t}");
}

#[test]
fn other_platforms_are_refused_in_one_line() {
    let cases = [
        (
            r#"<platform><cluster id="c" topology="FAT_TREE" topo_parameters="2;4,4;1,2;1,2" radical="0-15" bw="1Gbps" lat="1us" prefix="n" suffix=""/></platform>"#,
            "FAT_TREE",
        ),
        (
            r#"<platform><host id="a" speed="1Gf"/></platform>"#,
            "<host>",
        ),
        (
            r#"<platform><cluster id="c" topology="TORUS" topo_parameters="4,4" radical="0-15" bw="1Gbps" lat="1us" prefix="n" suffix=""/></platform>"#,
            "SPLITDUPLEX",
        ),
        (
            r#"<platform><cluster id="c" topology="TORUS" topo_parameters="4,4" radical="0-14" bw="1Gbps" lat="1us" sharing_policy="SPLITDUPLEX" prefix="n" suffix=""/></platform>"#,
            "16 hosts",
        ),
        (
            r#"<platform><cluster id="c" radical="0-3" bw="fast" lat="1us" prefix="n" suffix=""/></platform>"#,
            "bw 'fast'",
        ),
        (
            r#"<platform><cluster id="c" radical="0-3" bw="1Gbps" lat="1us" bb_bw="10Gbps" prefix="n" suffix=""/></platform>"#,
            "backbone",
        ),
        ("not xml at all", "<platform>"),
    ];
    for (i, (text, want)) in cases.iter().enumerate() {
        let xml = write(&format!("bad{i}.xml"), text);
        let (code, out, err) =
            topocoll(&["simulate", "-t", &xml, "-c", "alltoall", "-a", "linear"]);
        assert_eq!(code, 2, "{text}: {out} {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(want), "{text}: {err}");
    }
}
