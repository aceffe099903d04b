//! The grid paper's section 4: scatter across two sites of 16 hosts joined
//! by an 8 ms WAN, single-lane against multi-lane, each beside the cost
//! model T_L(P), and the WAN throughput each reaches (its Figures 2 and 3).
//!
//! The paper emulated its WAN (GNET-1) and measured a single stream at
//! about 5 Mbit/s; multi-lane used up to about twice that. The grid here
//! says the same physically: a WAN of 10 Mbit/s whose streams are TCP
//! streams with a 10 KiB window, so that one stream gets window / RTT
//! (RTT = 2·(8 ms + 2·50 µs) = 16.2 ms), 5.06 Mbit/s, and two or more share
//! the 10 Mbit/s. The LANs are Gigabit Ethernet (125 MB/s, 50 µs).

use super::plot::{self, Scale, Series};
use crate::error::Result;
use crate::model::multilane;
use crate::optimize::lanes;
use crate::topology::{Kind, Sites, Topology, Wan};
use std::fmt::Write;
use std::path::Path;

pub struct Settings {
    pub quick: bool,
}

/// The grid of the paper's experiment.
pub fn paper_grid() -> Result<Topology> {
    let sites = Sites::new(
        vec![16, 16],
        1.25e8,
        50e-6,
        8e-3,
        Wan::Window {
            capacity: 1.25e6,
            window: 10240.0,
        },
    )?;
    Ok(Topology::from_kind(
        "grid paper: 2 x 16 hosts",
        Kind::Sites(sites),
    ))
}

struct Row {
    size: u64,
    lanes: usize,
    single_s: f64,
    multi_s: f64,
    model_single_s: f64,
    model_multi_s: f64,
    wan_single_bps: f64,
    wan_multi_bps: f64,
}

/// Simulated time and WAN throughput (bits/s: the bytes that crossed from
/// the root's site over the time the WAN link carried any) of one scatter.
fn run_scatter(topo: &Topology, block: u64, p: usize) -> Result<(f64, f64)> {
    let sites = topo.sites().expect("a grid of sites");
    let r = lanes::run_scatter(topo, 0, block, p, &lanes::model_config())?;
    let wan = &r.links[sites.wan_links[0] as usize];
    let bps = if wan.busy_s > 0.0 {
        wan.bytes * 8.0 / wan.busy_s
    } else {
        0.0
    };
    Ok((r.time_s, bps))
}

pub fn run(dir: &Path, settings: &Settings) -> Result<String> {
    let topo = paper_grid()?;
    let sites = topo.sites().expect("built as sites");
    let sizes: Vec<u64> = if settings.quick {
        vec![1 << 10, 64 << 10, 1 << 20]
    } else {
        (0..=12).map(|k| 1024u64 << k).collect()
    };
    let rows = super::run_in_order(
        &sizes,
        &(0..sizes.len()).rev().collect::<Vec<_>>(),
        "multilane scatter",
        |&size| {
            let m = size as f64;
            let p = multilane::p_opt(sites, m, 0.0);
            let (single_s, wan_single_bps) = run_scatter(&topo, size, 1)?;
            let (multi_s, wan_multi_bps) = run_scatter(&topo, size, p)?;
            Ok(Row {
                size,
                lanes: p,
                single_s,
                multi_s,
                model_single_s: multilane::paper(sites, m, 0.0, 1),
                model_multi_s: multilane::paper(sites, m, 0.0, p),
                wan_single_bps,
                wan_multi_bps,
            })
        },
    )?;
    let mut csv = String::from(
        "size_bytes,lanes,single_lane_s,multi_lane_s,model_single_lane_s,model_multi_lane_s,wan_single_bps,wan_multi_bps\n",
    );
    for r in &rows {
        let _ = writeln!(
            csv,
            "{},{},{:.9e},{:.9e},{:.9e},{:.9e},{:.6e},{:.6e}",
            r.size,
            r.lanes,
            r.single_s,
            r.multi_s,
            r.model_single_s,
            r.model_multi_s,
            r.wan_single_bps,
            r.wan_multi_bps
        );
    }
    super::write(dir, "scatter.csv", &csv)?;
    let series = |name: &str, f: fn(&Row) -> f64| Series {
        name: name.to_string(),
        points: rows.iter().map(|r| (r.size as f64, f(r))).collect(),
    };
    plot::line_chart(
        &dir.join("scatter_times"),
        "Scatter across 2 sites x 16 hosts, 8 ms WAN",
        ("block per rank (bytes)", Scale::Log),
        ("time (s)", Scale::Log),
        &[
            series("single-lane (simulated)", |r| r.single_s),
            series("multi-lane (simulated)", |r| r.multi_s),
            series("single-lane model T_L(1)", |r| r.model_single_s),
            series("multi-lane model T_L(P_opt)", |r| r.model_multi_s),
        ],
    )?;
    plot::line_chart(
        &dir.join("wan_throughput"),
        "WAN throughput while it carries the scatter",
        ("block per rank (bytes)", Scale::Log),
        ("throughput (Mbit/s)", Scale::Linear),
        &[
            series("single-lane", |r| r.wan_single_bps / 1e6),
            series("multi-lane", |r| r.wan_multi_bps / 1e6),
        ],
    )?;
    let ratio = |f: fn(&Row) -> f64| {
        rows.iter()
            .map(f)
            .fold((f64::INFINITY, 0.0f64), |(lo, hi), x| {
                (lo.min(x), hi.max(x))
            })
    };
    let speed = ratio(|r| r.single_s / r.multi_s);
    let single_err = ratio(|r| r.model_single_s / r.single_s);
    let multi_err = ratio(|r| r.model_multi_s / r.multi_s);
    let mut summary = String::new();
    let _ = writeln!(
        summary,
        "multi-lane scatter, 2 x 16 hosts, 8 ms WAN, {} sizes from {} to {} bytes per rank",
        sizes.len(),
        sizes[0],
        sizes[sizes.len() - 1]
    );
    let _ = writeln!(
        summary,
        "  multi-lane / single-lane speed-up {:.2}x to {:.2}x (paper: about 1.5x)",
        speed.0, speed.1
    );
    let _ = writeln!(
        summary,
        "  model / simulated: single-lane {:.2} to {:.2} (paper: 1.5), multi-lane {:.2} to {:.2} (paper: about 1)",
        single_err.0, single_err.1, multi_err.0, multi_err.1
    );
    let last = &rows[rows.len() - 1];
    let _ = writeln!(
        summary,
        "  WAN throughput at {} bytes: single-lane {:.2} Mbit/s, multi-lane {:.2} Mbit/s (paper: about 5 and up to 2x)",
        last.size,
        last.wan_single_bps / 1e6,
        last.wan_multi_bps / 1e6
    );
    Ok(summary)
}
