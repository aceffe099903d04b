//! Several ranks per host (`--ranks-per-node`, `--map`): every algorithm
//! that takes such a placement verifies, simulates no faster than the
//! collective's bound and runs; a message between two ranks of a host
//! crosses the host's own link and nothing else; a rankfile places ranks as
//! the block and cyclic maps do; and what cannot take a placement says so.

use topocoll::algorithms::{self, Request, ALGORITHMS};
use topocoll::model::collective_bound;
use topocoll::schedule::{self, Collective, Dtype, Op, ReduceOp, Region, Schedule};
use topocoll::sim::{simulate, SimConfig};
use topocoll::topology::{parse_spec, RankMap, Topology};
use topocoll::Error;

mod common;

fn placed(spec: &str, k: usize, map: &RankMap) -> Topology {
    let mut t = parse_spec(spec).unwrap();
    t.place_ranks(k, map, 8e9, 1e-7).unwrap();
    t
}

#[test]
fn every_algorithm_verifies_and_keeps_above_its_bound() {
    let mut ran = 0;
    for (spec, k, map) in [
        ("torus:3x3", 2, RankMap::Block),
        ("torus:2x2", 3, RankMap::Cyclic),
        ("hypercube:2", 4, RankMap::Block),
    ] {
        let t = placed(spec, k, &map);
        let p = t.num_ranks();
        assert_eq!(p, k * t.local.iter().filter(|&&l| l != u32::MAX).count());
        for alg in ALGORITHMS {
            let c = alg.collective.with_root(1);
            let dtype = if c.is_reduction() {
                Dtype::F64
            } else {
                Dtype::U8
            };
            let req = Request::new(c, p, 96 * 1024, dtype, ReduceOp::Sum, Some(&t)).unwrap();
            let s = match algorithms::build(alg.name, &req) {
                Ok(s) => s,
                Err(Error::Unsupported { .. }) => continue,
                Err(e) => panic!("{} {}: {e}", alg.collective, alg.name),
            };
            let what = format!("{} {} on {spec} x{k}", alg.collective, alg.name);
            schedule::verify(&s).unwrap_or_else(|e| panic!("{what}: {e}"));
            let r = simulate(&s, &t, &SimConfig::default()).unwrap();
            let bound =
                collective_bound(s.collective, s.count, s.elem_bytes(), &t, None, None).unwrap();
            assert!(
                r.time_s >= bound * (1.0 - 1e-9),
                "{what}: {} < {bound}",
                r.time_s
            );
            ran += 1;
        }
    }
    assert!(ran > 60, "{ran} runs");
}

/// One message of `bytes` from rank `a` to rank `b`.
fn one_message(p: usize, a: u32, b: u32, bytes: u64) -> Schedule {
    let mut s = Schedule::new(
        Collective::Alltoall,
        p,
        bytes,
        Dtype::U8,
        ReduceOp::Sum,
        "one",
    );
    s.programs[a as usize].push(
        Op::Send {
            peer: b,
            tag: 0,
            region: Region::input(0, bytes),
            route: 0,
        },
        &[],
    );
    s.programs[b as usize].push(
        Op::Recv {
            peer: a,
            tag: 0,
            region: Region::output(0, bytes),
            combine: false,
        },
        &[],
    );
    s
}

#[test]
fn a_message_inside_a_host_crosses_its_link_alone() {
    let t = placed("torus:4x4", 4, &RankMap::Block);
    // Ranks 4 and 5 share host 1; 8e9 B/s and 0.1 us inside it.
    let r = simulate(&one_message(64, 4, 5, 1 << 20), &t, &SimConfig::default()).unwrap();
    let want = 1e-7 + (1u64 << 20) as f64 / 8e9;
    assert!((r.time_s - want).abs() <= 1e-15, "{} vs {want}", r.time_s);
    let used: Vec<usize> = (0..r.links.len())
        .filter(|&l| r.links[l].bytes > 0.0)
        .collect();
    assert_eq!(used, vec![t.local[1] as usize]);
    assert_eq!(t.link_name(t.local[1]), "(1,0) (inside the node)");
    // Cyclic: ranks 4 and 5 are on hosts 4 and 5, a network hop apart.
    let c = placed("torus:4x4", 4, &RankMap::Cyclic);
    let r = simulate(&one_message(64, 4, 5, 1 << 20), &c, &SimConfig::default()).unwrap();
    assert!(r.time_s > (1u64 << 20) as f64 / 1e9, "{}", r.time_s);
}

#[test]
fn a_rankfile_places_ranks_as_the_maps_do() {
    let dir = std::env::temp_dir().join(format!("topocoll-rpn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (plain, openmpi) = (dir.join("plain.txt"), dir.join("ompi.txt"));
    // Cyclic over 4 hosts, 2 ranks each: host indices, then Open MPI's
    // rankfile in another order of lines.
    let hosts: Vec<usize> = (0..8).map(|r| r % 4).collect();
    std::fs::write(
        &plain,
        hosts.iter().map(|h| format!("{h}\n")).collect::<String>(),
    )
    .unwrap();
    std::fs::write(
        &openmpi,
        (0..8)
            .rev()
            .map(|r| format!("rank {r}=({},{}) slot=0\n", hosts[r] % 2, hosts[r] / 2))
            .collect::<String>(),
    )
    .unwrap();
    let json = |map: &str| {
        let (code, out, err) = common::topocoll(&[
            "simulate",
            "-t",
            "torus:2x2",
            "--ranks-per-node",
            "2",
            "--map",
            map,
            "-c",
            "alltoall",
            "-a",
            "linear",
            "-s",
            "64KiB",
            "--format",
            "json",
        ]);
        assert_eq!(code, 0, "{map}: {err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        v["time_s"].as_f64().unwrap()
    };
    let cyclic = json("cyclic");
    assert_eq!(json(plain.to_str().unwrap()).to_bits(), cyclic.to_bits());
    assert_eq!(json(openmpi.to_str().unwrap()).to_bits(), cyclic.to_bits());
    assert_ne!(json("block").to_bits(), cyclic.to_bits());
}

#[test]
fn runs_and_refusals() {
    let (code, out, err) = common::topocoll(&[
        "run",
        "-t",
        "torus:2x2",
        "--ranks-per-node",
        "3",
        "--map",
        "cyclic",
        "-c",
        "allreduce",
        "-a",
        "rabenseifner",
        "-s",
        "64KiB",
        "--check",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    for (args, says) in [
        (
            vec![
                "simulate",
                "-t",
                "torus:4x4",
                "--ranks-per-node",
                "0",
                "-c",
                "bcast",
                "-a",
                "binomial",
            ],
            "at least 1",
        ),
        (
            vec![
                "simulate",
                "--ranks",
                "8",
                "--ranks-per-node",
                "2",
                "-c",
                "bcast",
                "-a",
                "binomial",
            ],
            "give one",
        ),
        (
            vec![
                "simulate",
                "-t",
                "torus:4x4",
                "--map",
                "/nonexistent/rankfile",
                "-c",
                "bcast",
                "-a",
                "binomial",
            ],
            "rankfile",
        ),
        (
            vec![
                "simulate",
                "-t",
                "torus:4x4",
                "--ranks-per-node",
                "2",
                "-c",
                "alltoall",
                "-a",
                "a2at",
            ],
            "a2at",
        ),
        (
            vec![
                "simulate",
                "-t",
                "torus:4x4",
                "--ranks-per-node",
                "2",
                "--node-bandwidth",
                "-1",
                "-c",
                "bcast",
                "-a",
                "binomial",
            ],
            "--node-bandwidth",
        ),
        (
            vec![
                "simulate",
                "--model",
                "packet",
                "--buffer",
                "512",
                "-t",
                "dragonnet:8",
                "--ranks-per-node",
                "2",
                "-c",
                "alltoall",
                "-a",
                "dragon_net",
            ],
            "one rank per Dragon net node",
        ),
    ] {
        let (code, _, err) = common::topocoll(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: expected '{says}' in: {err}");
    }
}
