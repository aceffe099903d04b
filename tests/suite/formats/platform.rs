//! SimGrid platform files as topologies: the platform that
//! validation/simgrid/platform.py writes for a torus simulates to the same
//! bits as topocoll's own spec with SimGrid's tie rule; a flat cluster is a
//! tree of hosts on one router, and the same bits as the zone of hosts,
//! links and routes that spells it out; fat trees and dragonflies are
//! topologies every verb takes; what is not read is refused in one line.
//! (Their routes against SimGrid's: the unit tests of
//! `topology::simgrid`; their times: `validation/simgrid/run.sh --clusters`.)

use crate::common::topocoll;

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
    assert!(out.contains("graph of 9 nodes (8 hosts)"), "{out}");
    // One MB over one 125 MB/s host link at least: 8 ms.
    let t = time(&[
        "simulate", "-t", &xml, "-c", "bcast", "-a", "binomial", "-s", "1MB", "--format", "json",
    ]);
    assert!(t > 8e-3, "{t}");
}

/// The flat cluster above, spelt out: each host's own link, split per
/// direction, and a route for every pair (up the source's, down the
/// destination's).
fn explicit_star(n: usize) -> String {
    let mut x = String::from(
        "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n<platform version=\"4.1\"><zone id=\"z\" routing=\"Full\">\n",
    );
    for i in 0..n {
        x += &format!("<host id=\"h{i}\" speed=\"1Gf\"/>\n");
    }
    for i in 0..n {
        x += &format!(
            "<link id=\"l{i}\" bandwidth=\"125MBps\" latency=\"50us\" sharing_policy=\"SPLITDUPLEX\"/>\n"
        );
    }
    for i in 0..n {
        for j in i + 1..n {
            x += &format!(
                "<route src=\"h{i}\" dst=\"h{j}\"><link_ctn id=\"l{i}\" direction=\"UP\"/><link_ctn id=\"l{j}\" direction=\"DOWN\"/></route>\n"
            );
        }
    }
    x + "</zone></platform>\n"
}

#[test]
fn a_zone_of_hosts_links_and_routes_is_read() {
    let flat = write(
        "flat2.xml",
        r#"<platform version="4.1"><cluster id="c" prefix="h" suffix="" radical="0-7" speed="1Gf" bw="125MBps" lat="50us"/></platform>"#,
    );
    let star = write("star.xml", &explicit_star(8));
    for (c, a) in [
        ("bcast", "binomial"),
        ("alltoall", "pairwise"),
        ("allreduce", "ring"),
    ] {
        let run = |t: &str| {
            time(&[
                "simulate",
                "-t",
                t,
                "-c",
                c,
                "-a",
                a,
                "-s",
                "64KiB",
                "--engines",
                "2",
                "--format",
                "json",
            ])
        };
        assert_eq!(run(&flat).to_bits(), run(&star).to_bits(), "{c} {a}");
    }
    // Links keep their names in reports.
    let (code, out, err) = topocoll(&[
        "simulate", "-t", &star, "-c", "bcast", "-a", "binomial", "-s", "1MB",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("busiest link    l0_UP"), "{out}");
}

#[test]
fn fat_trees_and_dragonflies_are_topologies_like_any() {
    for (topology, params, hosts) in [
        ("FAT_TREE", "2;4,4;1,2;1,2", 16),
        ("DRAGONFLY", "2,2;2,2;4,1;2", 32),
    ] {
        let xml = write(
            &format!("{topology}.xml"),
            &format!(
                r#"<platform version="4.1"><zone id="w" routing="Full"><cluster id="n" topology="{topology}" topo_parameters="{params}" prefix="node-" radical="0-{}" suffix="" speed="1Gf" bw="1e9Bps" lat="1e-06s"/></zone></platform>"#,
                hosts - 1
            ),
        );
        for args in [
            vec![
                "verify",
                "-t",
                &xml,
                "-c",
                "allreduce",
                "-a",
                "rabenseifner",
                "-s",
                "1MiB",
            ],
            vec![
                "simulate",
                "-t",
                &xml,
                "-c",
                "alltoall",
                "-a",
                "bruck,pairwise",
                "-s",
                "4KiB",
            ],
            vec![
                "run",
                "-t",
                &xml,
                "-c",
                "allgather",
                "-a",
                "ring",
                "-s",
                "4KiB",
                "--check",
            ],
        ] {
            let (code, out, err) = topocoll(&args);
            assert_eq!(code, 0, "{args:?}: {out}{err}");
        }
    }
}

#[test]
fn other_platforms_are_refused_in_one_line() {
    let cases = [
        (
            r#"<platform><cluster id="c" topology="FAT_TREE" topo_parameters="2;4,4;1,2" radical="0-15" bw="1Gbps" lat="1us" prefix="n" suffix=""/></platform>"#,
            "FAT_TREE topo_parameters",
        ),
        (
            r#"<platform><cluster id="c" topology="DRAGONFLY" topo_parameters="3,1;1,1;2,1;1" radical="0-5" bw="1Gbps" lat="1us" prefix="n" suffix=""/></platform>"#,
            "at least as many routers",
        ),
        (
            r#"<platform><zone id="z" routing="Vivaldi"><host id="a" speed="1Gf"/></zone></platform>"#,
            "the Vivaldi model is not read",
        ),
        (
            r#"<platform><zone id="z" routing="Full"><host id="a" speed="1Gf"/><host id="b" speed="1Gf"/></zone></platform>"#,
            "no route from",
        ),
        (
            r#"<platform><zone id="z" routing="Full"><host id="a" speed="1Gf"/><host id="b" speed="1Gf"/><link id="l" bandwidth="1GBps"/><route src="a" dst="b"><link_ctn id="m"/></route></zone></platform>"#,
            "link 'm'",
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
