//! Issue 4's timing properties, on the simulator in normalised units
//! (bandwidth 1, block 1, latency 0).

use topocoll::algorithms::{self, Request};
use topocoll::model::alltoall;
use topocoll::schedule::{Collective, Dtype, ReduceOp};
use topocoll::sim::{simulate, SimConfig};
use topocoll::topology::parse_spec;

fn time(spec: &str, alg: &str, engines: usize) -> f64 {
    let mut t = parse_spec(spec).unwrap();
    t.set_uniform_links(Some(1.0), Some(0.0)).unwrap();
    let req = Request::new(
        Collective::Alltoall,
        t.num_ranks(),
        1,
        Dtype::U8,
        ReduceOp::Sum,
        Some(&t),
    )
    .unwrap();
    let s = algorithms::build(alg, &req).unwrap();
    simulate(
        &s,
        &t,
        &SimConfig {
            engines,
            ..SimConfig::default()
        },
    )
    .unwrap()
    .time_s
}

fn bound(nx: usize, ny: usize, torus: bool) -> f64 {
    alltoall::grid(&[nx, ny], &[torus, torus], 1.0, 1.0)
}

#[test]
fn a2at_on_the_mesh_with_2_engines_reaches_the_bound() {
    for ny in 2..=12 {
        for nx in ny..=12 {
            let t = time(&format!("mesh:{nx}x{ny}"), "a2at", 2);
            let lb = bound(nx, ny, false);
            assert_eq!(lb, ((nx / 2) * nx.div_ceil(2) * ny) as f64);
            assert!(
                (t - lb).abs() <= 1e-9 * lb,
                "mesh {nx}x{ny}: {t} vs T_lb {lb}"
            );
        }
    }
}

#[test]
fn a2at_on_the_torus_with_4_engines_reaches_half_the_bound() {
    for ny in 2..=12 {
        for nx in ny..=12 {
            if !(nx == ny || (nx % 2 == 1 && ny % 2 == 1)) {
                continue;
            }
            let t = time(&format!("torus:{nx}x{ny}"), "a2at", 4);
            let lb = bound(nx, ny, true);
            assert_eq!(lb, ((nx / 2) * nx.div_ceil(2) * ny) as f64 / 2.0);
            assert!(
                (t - lb).abs() <= 1e-9 * lb,
                "torus {nx}x{ny}: {t} vs T_lb/2 {lb}"
            );
        }
    }
}

#[test]
fn dragon_on_the_hypercube_never_shares_a_link() {
    for n in 1..=8 {
        let spec = format!("hypercube:{n}");
        let t = parse_spec(&spec).unwrap();
        let req = Request::new(
            Collective::Alltoall,
            1 << n,
            64,
            Dtype::U8,
            ReduceOp::Sum,
            Some(&t),
        )
        .unwrap();
        let s = algorithms::build("dragon", &req).unwrap();
        let r = simulate(&s, &t, &SimConfig::default()).unwrap();
        assert!(r.links.iter().all(|l| l.peak_flows <= 1), "hypercube:{n}");
        assert_eq!(r.links_shared_fraction, 0.0);
    }
}
