//! Agreement with SimGrid 3.32 (SMPI, CM02): the rendezvous option, and figures that
//! `bash validation/simgrid/run.sh` measured with smpirun (docs/VALIDATION.md).

use topocoll::algorithms::Request;
use topocoll::schedule::{Collective, Dtype, Op, ReduceOp, Region, Schedule};
use topocoll::sim::{simulate, Fairness, SimConfig};
use topocoll::topology::{parse_spec, Topology, TorusTie};

/// Links of 10^9 B/s and 1 µs, SimGrid's tie rule at half an even ring.
fn torus(spec: &str) -> Topology {
    let mut t = parse_spec(spec).unwrap();
    t.set_uniform_links(Some(1e9), Some(1e-6)).unwrap();
    t.set_torus_tie(TorusTie::SimGrid);
    t
}

/// The flags run.sh gives topocoll: CM02's sharing, SMPI's 16-byte envelope, one engine,
/// rendezvous.
fn simgrid_config() -> SimConfig {
    simgrid_config_for_platforms()
}

/// run.sh's flags for topocoll (the same for every scenario).
pub(crate) fn simgrid_config_for_platforms() -> SimConfig {
    SimConfig {
        engines: 1,
        fairness: Fairness::Rtt,
        header_bytes: 16,
        tcp_window: Some(4194304.0),
        rendezvous: true,
        ..SimConfig::default()
    }
}

fn time(topo: &Topology, collective: Collective, alg: &str, bytes: u64, cfg: &SimConfig) -> f64 {
    let dtype = match collective {
        Collective::Allreduce => Dtype::F64,
        _ => Dtype::U8,
    };
    let req = Request::new(
        collective,
        topo.num_ranks(),
        bytes,
        dtype,
        ReduceOp::Sum,
        Some(topo),
    )
    .unwrap();
    let s = topocoll::algorithms::build(
        topocoll::algorithms::find(req.collective.kind(), alg).unwrap(),
        &req,
    )
    .unwrap();
    simulate(&s, topo, cfg).unwrap().time_s
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs()
}

/// Rank 0 sends 1 MB to rank 1, which posts its receive after 5 ms of compute.
fn late_receiver() -> Schedule {
    let mut s = Schedule::new(
        Collective::Alltoall,
        2,
        1_000_000,
        Dtype::U8,
        ReduceOp::Sum,
        "late receiver",
    );
    s.programs[0].push(
        Op::Send {
            peer: 1,
            tag: 0,
            region: Region::input(1_000_000, 1_000_000),
            route: 0,
        },
        &[],
    );
    let c = s.programs[1].push(Op::Compute { seconds: 5e-3 }, &[]);
    s.programs[1].push(
        Op::Recv {
            peer: 0,
            tag: 0,
            region: Region::output(0, 1_000_000),
            combine: false,
        },
        &[c],
    );
    s
}

#[test]
fn rendezvous_transfer_waits_for_its_receive() {
    let topo = torus("mesh:2x1");
    let s = late_receiver();
    let eager = simulate(&s, &topo, &SimConfig::default()).unwrap();
    // Eager: the data arrives at 1 µs + 1 ms, the receive completes when posted.
    assert!(close(eager.rank_finish_s[0], 1.001e-3, 1e-12));
    assert!(close(eager.time_s, 5e-3, 1e-12));
    let cfg = SimConfig {
        rendezvous: true,
        ..SimConfig::default()
    };
    let rdv = simulate(&s, &topo, &cfg).unwrap();
    // Rendezvous: the transfer starts at 5 ms, and the sender is held until it ends.
    assert!(close(rdv.time_s, 6.001e-3, 1e-12), "{}", rdv.time_s);
    assert!(close(rdv.rank_finish_s[0], 6.001e-3, 1e-12));
}

#[test]
fn a_receive_never_posted_is_an_error_under_rendezvous() {
    // Rank 0 sends tag 0, then tag 1; rank 1 receives tag 1, then tag 0. Eager: tag 0
    // flows at once and waits at rank 1. Rendezvous: tag 0 waits for its receive, which
    // waits for tag 1, which waits for tag 0.
    let topo = torus("mesh:2x1");
    let mut s = Schedule::new(
        Collective::Alltoall,
        2,
        1000,
        Dtype::U8,
        ReduceOp::Sum,
        "crossed",
    );
    let send = |tag, at| Op::Send {
        peer: 1,
        tag,
        region: Region::input(at, 1000),
        route: 0,
    };
    let recv = |tag, at| Op::Recv {
        peer: 0,
        tag,
        region: Region::output(at, 1000),
        combine: false,
    };
    let a = s.programs[0].push(send(0, 0), &[]);
    s.programs[0].push(send(1, 1000), &[a]);
    let b = s.programs[1].push(recv(1, 1000), &[]);
    s.programs[1].push(recv(0, 0), &[b]);
    assert!(simulate(&s, &topo, &SimConfig::default()).is_ok());
    let cfg = SimConfig {
        rendezvous: true,
        ..SimConfig::default()
    };
    let err = simulate(&s, &topo, &cfg).unwrap_err().to_string();
    assert!(err.contains("wait for a receive"), "{err}");
}

/// smpirun figures (SimGrid 3.32, CM02, crosstraffic off). Alltoalls: SimGrid's
/// `--cfg=network/optim:Full` solver, to which topocoll agrees to 1e-7; the default Lazy
/// solver differs from Full by up to 0.1% (docs/VALIDATION.md).
#[test]
fn simgrid_figures_are_reproduced() {
    let cfg = simgrid_config();
    let t = time(
        &torus("torus:4x4"),
        Collective::Alltoall,
        "pairwise",
        65536,
        &cfg,
    );
    assert!(close(t, 1.474144e-3, 1e-9), "{t}");
    let t88 = torus("torus:8x8");
    let t = time(&t88, Collective::Alltoall, "pairwise", 65536, &cfg);
    assert!(close(t, 1.034663453731e-02, 1e-6), "{t}");
    let t = time(&t88, Collective::Alltoall, "ring", 65536, &cfg);
    assert!(close(t, 1.240834592249e-02, 1e-6), "{t}");
    // Eager messages start before the partner is ready: 27% slower here.
    let eager = SimConfig {
        rendezvous: false,
        ..simgrid_config()
    };
    let t = time(&t88, Collective::Alltoall, "ring", 65536, &eager);
    assert!(close(t, 1.571325572e-2, 1e-6), "{t}");
    let t = time(
        &torus("torus:8x8x8"),
        Collective::Bcast { root: 0 },
        "binomial",
        65536,
        &cfg,
    );
    assert!(close(t, 6.10968e-4, 1e-9), "{t}");
    let t = time(
        &torus("torus:16x16"),
        Collective::Allreduce,
        "ring",
        1 << 20,
        &cfg,
    );
    assert!(close(t, 3.11712e-3, 1e-9), "{t}");
}

/// SimGrid 3.32's live times under its default model, SMPI's (factors,
/// weight-S, cross-traffic: `validation/simgrid/run.sh --platforms --smpi`),
/// reproduced by `sim::simgrid::configure` with no options: 64 KiB
/// collectives on SimGrid's example platforms, split-duplex and shared
/// links (`two_hosts_platform_shared`, whose route back is the route
/// itself), FATPIPE backbones and zone routes.
#[test]
fn smpis_default_model_gives_simgrids_times_on_its_platforms() {
    let mut cfg = SimConfig {
        engines: 1,
        ..SimConfig::default()
    };
    topocoll::sim::simgrid::configure(&mut cfg, &[]).unwrap();
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/simgrid-platforms");
    for (file, collective, alg, want) in [
        ("small_platform", Collective::Alltoall, "ring", 5.183685e+00),
        ("cluster_multi", Collective::Alltoall, "ring", 4.460450e-01),
        ("meta_cluster", Collective::Alltoall, "ring", 1.230625e+00),
        ("cluster_torus", Collective::Alltoall, "ring", 2.304350e-02),
        (
            "cluster_backbone",
            Collective::Bcast { root: 0 },
            "binomial",
            5.403192e-02,
        ),
        (
            "ns3-big-cluster",
            Collective::Bcast { root: 0 },
            "binomial",
            3.503048e-01,
        ),
        (
            "two_hosts_platform_shared",
            Collective::Allreduce,
            "ring",
            2.276134e-03,
        ),
        (
            "cluster_fat_tree",
            Collective::Allreduce,
            "ring",
            1.255957e-02,
        ),
    ] {
        let topo = topocoll::topology::parse_spec(&format!("{dir}/{file}.xml")).unwrap();
        let got = time(&topo, collective, alg, 65536, &cfg);
        assert!(
            close(got, want, 1e-6),
            "{file} {collective:?} {alg}: {got:e} s, SimGrid {want:e} s"
        );
    }
}
