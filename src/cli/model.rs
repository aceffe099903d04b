//! `topocoll model`: evaluates the papers' analytical models.

use super::args::TextOrJson;
use crate::algorithms::trees::{check_trees, torus_trees};
use crate::model::trinaryx3::{self as trix, Params};
use crate::optimize::lanes;
use crate::topology;
use crate::units::{format_bytes, parse_bytes};
use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use topocoll_base::Error;

#[derive(Args)]
pub struct ModelArgs {
    #[command(subcommand)]
    model: Model,
}

#[derive(Subcommand)]
enum Model {
    /// The allreduce paper's eqs (1)-(4): pipelined Bcast and Reduce on one
    /// tree and on Trinaryx3's three (defaults: the paper's K-computer values).
    Trinaryx3(Trinaryx3Args),
    /// The grid paper's multi-lane scatter cost model T_L(P) (section 3.2)
    /// for every lane count, its P_opt, and beside them a refined model and
    /// the simulated scatter for every P.
    Multilane(MultilaneArgs),
}

#[derive(Args)]
struct MultilaneArgs {
    /// A grid of sites (a TOML file of kind "sites").
    #[arg(long, short = 't')]
    topology: String,
    /// M: the block per rank, bytes (64KiB, 1MB, ...).
    #[arg(long, short = 's')]
    size: String,
    /// α: the overhead the model adds, seconds.
    #[arg(
        long,
        default_value_t = 0.0,
        allow_negative_numbers = true,
        allow_hyphen_values = true
    )]
    alpha: f64,
    /// The scatter's root rank.
    #[arg(long, default_value_t = 0)]
    root: u32,
    /// text or json.
    #[arg(long, value_enum, default_value_t = TextOrJson::Text)]
    format: TextOrJson,
}

#[derive(Args)]
struct Trinaryx3Args {
    /// H: pipeline stages (tree height).
    #[arg(long, default_value_t = trix::PAPER_H, allow_negative_numbers = true, allow_hyphen_values = true)]
    height: f64,
    /// Take H from the Trinaryx3 trees of this torus instead (e.g. tofu:24x2x16 = 48x6x32).
    #[arg(long, conflicts_with = "height")]
    topology: Option<String>,
    /// L: per-message latency, seconds.
    #[arg(long, default_value_t = trix::PAPER_LATENCY_S, allow_negative_numbers = true, allow_hyphen_values = true)]
    latency: f64,
    /// BWcomm: one path's bandwidth, bytes/s (default 11.6e9/3).
    #[arg(long, default_value_t = trix::PAPER_BW_COMM, allow_negative_numbers = true, allow_hyphen_values = true)]
    bandwidth: f64,
    /// BWcomp: reduction throughput, bytes/s.
    #[arg(long, default_value_t = trix::PAPER_BW_COMP, allow_negative_numbers = true, allow_hyphen_values = true)]
    compute_bandwidth: f64,
    /// N: message size in bytes (1GiB, 64KiB, ...).
    #[arg(long, default_value = "1GiB")]
    size: String,
    /// SS for the Bcast equations (1) and (3), bytes.
    #[arg(long, default_value = "64KiB")]
    segment: String,
    /// SS for the Reduce equations (2) and (4), bytes.
    #[arg(long, default_value = "48KiB")]
    reduce_segment: String,
}

pub fn run(a: ModelArgs) -> Result<i32> {
    match a.model {
        Model::Trinaryx3(t) => trinaryx3(t),
        Model::Multilane(m) => multilane(m),
    }
}

fn bytes(flag: &str, text: &str) -> Result<u64> {
    parse_bytes(text).map_err(|e| Error::Invalid(format!("--{flag}: {e}")).into())
}

/// The most nodes `--topology` builds trees on.
const MAX_MODEL_NODES: usize = 1 << 20;

fn trinaryx3(a: Trinaryx3Args) -> Result<i32> {
    let mut h = a.height;
    let mut from = "--height".to_string();
    if let Some(spec) = &a.topology {
        let topo = topology::parse_spec(spec)?;
        let shape = topo
            .grid_shape()
            .ok_or_else(|| Error::Invalid(format!("--topology {spec}: the trees need a torus")))?;
        // The trees are built and checked to find their height: about
        // 300 bytes a node.
        if shape.size() > MAX_MODEL_NODES {
            return Err(Error::Invalid(format!(
                "--topology {spec}: more than {MAX_MODEL_NODES} nodes to build trees on; give --height"
            ))
            .into());
        }
        let trees = torus_trees(&shape, 0)?;
        if trees.len() != 3 {
            return Err(Error::Invalid(format!(
                "--topology {spec}: equations (3) and (4) split the message over three trees, \
                 and this torus has {}; give a 3D torus, or --height",
                trees.len()
            ))
            .into());
        }
        let report = check_trees(&shape, &trees)?;
        h = report.heights.iter().copied().max().unwrap_or(0) as f64;
        let dims: Vec<String> = shape.dims.iter().map(|d| d.to_string()).collect();
        from = format!(
            "height of the {} Trinaryx3 trees on the {} torus",
            trees.len(),
            dims.join("x")
        );
    }
    let n = bytes("size", &a.size)?;
    let ss_bc = bytes("segment", &a.segment)?;
    let ss_rd = bytes("reduce-segment", &a.reduce_segment)?;
    let base = Params {
        h,
        l: a.latency,
        bw_comm: a.bandwidth,
        bw_comp: a.compute_bandwidth,
        n: n as f64,
        ss: ss_bc as f64,
    };
    let bc = base;
    let rd = Params {
        ss: ss_rd as f64,
        ..base
    };
    bc.check()
        .context("the bcast equations (1) and (3) (segment: --segment)")?;
    rd.check()
        .context("the reduce equations (2) and (4) (segment: --reduce-segment)")?;
    // Computed (and checked) before anything is printed.
    let t1 = trix::bcast(&bc);
    let t2 = trix::reduce(&rd);
    let t3 = trix::trinaryx3_bcast(&bc);
    let t4 = trix::trinaryx3_reduce(&rd);
    if ![t1, t2, t3, t4].iter().all(|t| t.is_finite()) {
        return Err(Error::Invalid(
            "the model's times overflow (inf): the latency, bandwidths or sizes given are out of range"
                .into(),
        )
        .into());
    }
    let ms = |t: f64| t * 1e3;
    outln!("Trinaryx3 performance model (allreduce paper, section 4.3):");
    outln!("  H = {h} ({from})");
    outln!(
        "  L = {} us, BWcomm = {:.4} GB/s, BWcomp = {:.4} GB/s (GB = 1e9 bytes)",
        a.latency * 1e6,
        a.bandwidth / 1e9,
        a.compute_bandwidth / 1e9
    );
    outln!(
        "  N = {} ({n} bytes), SS = {} (bcast), {} (reduce)",
        format_bytes(n),
        format_bytes(ss_bc),
        format_bytes(ss_rd)
    );
    outln!(
        "  (1) Bcast, one tree         T_bc        = {:10.3} ms",
        ms(t1)
    );
    outln!(
        "  (2) Reduce, one tree        T_rd        = {:10.3} ms",
        ms(t2)
    );
    outln!(
        "  (3) Trinaryx3 Bcast         T_Trix3_bc  = {:10.3} ms",
        ms(t3)
    );
    outln!(
        "  (4) Trinaryx3 Reduce        T_Trix3_rd  = {:10.3} ms",
        ms(t4)
    );
    let all = t3 + t4;
    outln!(
        "  Trinaryx3 Allreduce (3)+(4)              = {:10.3} ms, bandwidth 2N/T = {:.3} GB/s",
        ms(all),
        2.0 * n as f64 / all / 1e9
    );
    Ok(0)
}

fn multilane(a: MultilaneArgs) -> Result<i32> {
    let json = a.format == TextOrJson::Json;
    if !(a.alpha.is_finite() && a.alpha >= 0.0) {
        return Err(Error::Invalid(format!(
            "--alpha must be a number of seconds, 0 or more, got {}",
            a.alpha
        ))
        .into());
    }
    let m = bytes("size", &a.size)?;
    let topo = topology::parse_spec(&a.topology)?;
    let Some(sites) = topo.sites() else {
        return Err(Error::Invalid(format!(
            "--topology {}: the multi-lane model needs a grid of sites (kind = \"sites\")",
            a.topology
        ))
        .into());
    };
    if a.root as usize >= topo.num_ranks() {
        return Err(Error::Invalid(format!(
            "--root {} is not a rank of the {} the topology has",
            a.root,
            topo.num_ranks()
        ))
        .into());
    }
    let cfg = lanes::model_config();
    let st = lanes::study(&topo, a.root as usize, m, a.alpha, &cfg)?;
    if json {
        let list = |f: fn(&lanes::LanePoint) -> f64| -> Vec<serde_json::Value> {
            st.points
                .iter()
                .map(|x| serde_json::json!({"p": x.p, "t_s": f(x)}))
                .collect()
        };
        let v = serde_json::json!({
            "lanes": list(|x| x.paper_s),
            "p_opt": st.p_opt,
            "refined": list(|x| x.refined_s),
            "p_refined": st.p_refined,
            "simulated": list(|x| x.simulated_s),
            "p_simulated": st.p_simulated,
            "model_error": st.paper_error(),
        });
        outln!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(0);
    }
    let sizes: Vec<String> = sites.sizes.iter().map(|n| n.to_string()).collect();
    outln!("Multi-lane scatter cost model (grid paper, section 3.2):");
    outln!("  T_L(P) = L + x*M/b_L(P) + y*M/B + alpha,");
    outln!("  x = floor(P_max/P) + P_max mod P, x + y = n0 + n1 - 1, P_max = max(n0, n1)");
    outln!(
        "  sites {}, L = {} s, B = {} B/s, M = {} ({m} bytes), alpha = {} s, root {}",
        sizes.join(" + "),
        sites.wan_latency,
        sites.lan_bandwidth,
        format_bytes(m),
        a.alpha,
        a.root
    );
    outln!("  refined: even runs (ceil(n/P)), the algorithm's own overlap; simulated: scatter multilane --lanes P, one engine per host");
    outln!(
        "  {:>3} {:>14} {:>14} {:>14} {:>14} {:>9}",
        "P",
        "b_L(P) B/s",
        "T_L(P) s",
        "refined s",
        "simulated s",
        "T_L/sim"
    );
    for x in &st.points {
        outln!(
            "  {:>3} {:>14.6e} {:>14.6e} {:>14.6e} {:>14.6e} {:>9.3}",
            x.p,
            sites.lane_bandwidth(x.p),
            x.paper_s,
            x.refined_s,
            x.simulated_s,
            x.paper_s / x.simulated_s
        );
    }
    outln!("  P_opt (T_L)       = {}", st.p_opt);
    outln!("  P_opt (refined)   = {}", st.p_refined);
    outln!("  P_opt (simulated) = {}", st.p_simulated);
    outln!(
        "  T_L at the simulated best P is {:+.1}% off the simulation",
        st.paper_error() * 100.0
    );
    Ok(0)
}
