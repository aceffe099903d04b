//! The tree-broadcast paper's section 6: solve times of the optimal
//! broadcast with the symmetry cuts on and off (its Tables 1–4), and the
//! optimal broadcast against MPI's default broadcasts (Tables 5–6), on its
//! four families of networks.
//!
//! The paper's link parameters were measured and not printed; ours are
//! stated in docs/treebcast.md: Gigabit Ethernet 100 MB/s and 50 µs a hop,
//! Fast Ethernet 11 MB/s and 100 µs, and inside a dual-CPU node each CPU on
//! a half-duplex memory-bus edge of 400 MB/s and 2 µs.

use super::plot::{self, Scale, Series};
use crate::error::Result;
use crate::optimize::treebcast::{self, Options, Problem};
use crate::topology::{Duplex, EdgeSpec, Graph, Kind, NodeKind, NodeSpec, Topology};
use std::fmt::Write as _;
use std::path::Path;

/// Gigabit Ethernet: bytes/s and seconds a hop.
pub const GIGABIT: (f64, f64) = (1.0e8, 50e-6);
/// Fast Ethernet.
pub const FAST: (f64, f64) = (1.1e7, 100e-6);
/// A CPU's share of a dual-CPU node's memory bus (half duplex).
pub const BUS: (f64, f64) = (4.0e8, 2e-6);
/// The broadcast: 1 MiB.
pub const SIZE: u64 = 1 << 20;

/// What to run.
pub struct Settings {
    /// Only the smallest instance of each family.
    pub quick: bool,
    /// Each solve's time limit (s).
    pub time_limit_s: f64,
}

/// One network of the paper's section 6.
pub struct Instance {
    pub family: &'static str,
    pub name: String,
    pub topology: Topology,
}

/// Builds a tree from (name, is host) nodes and (a, b, (bandwidth,
/// latency), duplex) edges.
struct Builder {
    nodes: Vec<NodeSpec>,
    edges: Vec<EdgeSpec>,
}

impl Builder {
    fn new() -> Builder {
        Builder {
            nodes: Vec::new(),
            edges: Vec::new(),
        }
    }

    fn node(&mut self, name: String, host: bool) -> String {
        self.nodes.push(NodeSpec {
            name: name.clone(),
            kind: if host {
                NodeKind::Host
            } else {
                NodeKind::Switch
            },
        });
        name
    }

    fn edge(&mut self, a: &str, b: &str, (bw, lat): (f64, f64), duplex: Duplex) {
        self.edges.push(EdgeSpec {
            a: a.into(),
            b: b.into(),
            bandwidth: Some(bw),
            latency: Some(lat),
            duplex,
            ..Default::default()
        });
    }

    /// A dual-CPU node on `switch` through a link of `net`.
    fn dual_node(&mut self, prefix: &str, switch: &str, net: (f64, f64)) {
        let bus = self.node(prefix.to_string(), false);
        for cpu in 0..2 {
            let c = self.node(format!("{prefix}.cpu{cpu}"), true);
            self.edge(&c, &bus, BUS, Duplex::Half);
        }
        self.edge(&bus, switch, net, Duplex::Full);
    }

    fn build(self, name: String) -> Result<Topology> {
        let g = Graph::tree(&self.nodes, &self.edges, GIGABIT.0, GIGABIT.1)?;
        Ok(Topology::from_kind(name, Kind::Tree(g)))
    }
}

/// Fig. 11: `hosts` hosts on one Gigabit switch.
pub fn star(hosts: usize) -> Result<Topology> {
    let mut b = Builder::new();
    let sw = b.node("switch".into(), false);
    for h in 0..hosts {
        let n = b.node(format!("host{h}"), true);
        b.edge(&n, &sw, GIGABIT, Duplex::Full);
    }
    b.build(format!("star of {hosts}"))
}

/// Fig. 12: `nodes` dual-CPU nodes on one Gigabit switch.
pub fn dual_cpu(nodes: usize) -> Result<Topology> {
    let mut b = Builder::new();
    let sw = b.node("switch".into(), false);
    for n in 0..nodes {
        b.dual_node(&format!("node{n}"), &sw, GIGABIT);
    }
    b.build(format!("2x{nodes}"))
}

/// Figs. 13 and 14: two clusters of `nodes` dual-CPU nodes, their switches
/// joined by a Gigabit link; the first cluster on `first` (Gigabit, or Fast
/// Ethernet for the unequal clusters), the second on Gigabit.
pub fn clusters(nodes: usize, first: (f64, f64), name: String) -> Result<Topology> {
    let mut b = Builder::new();
    let sa = b.node("switchA".into(), false);
    let sb = b.node("switchB".into(), false);
    b.edge(&sa, &sb, GIGABIT, Duplex::Full);
    for n in 0..nodes {
        b.dual_node(&format!("a{n}"), &sa, first);
    }
    for n in 0..nodes {
        b.dual_node(&format!("b{n}"), &sb, GIGABIT);
    }
    b.build(name)
}

/// The sixteen networks of Tables 1–4 (the smallest of each family when
/// `quick`).
pub fn instances(quick: bool) -> Result<Vec<Instance>> {
    let mut v = Vec::new();
    let take = |k: &[usize]| -> Vec<usize> {
        if quick {
            k[..1].to_vec()
        } else {
            k.to_vec()
        }
    };
    for h in take(&[8, 10, 12, 14, 16]) {
        v.push(Instance {
            family: "star",
            name: h.to_string(),
            topology: star(h)?,
        });
    }
    for n in take(&[4, 5, 6, 7, 8]) {
        v.push(Instance {
            family: "dual_cpu",
            name: format!("2x{n}"),
            topology: dual_cpu(n)?,
        });
    }
    for n in take(&[2, 3, 4]) {
        let name = format!("2x{n}x2");
        v.push(Instance {
            family: "clusters",
            topology: clusters(n, GIGABIT, name.clone())?,
            name,
        });
    }
    for n in take(&[2, 3, 4]) {
        let name = format!("2x{n}x(1+1)");
        v.push(Instance {
            family: "unequal_clusters",
            topology: clusters(n, FAST, name.clone())?,
            name,
        });
    }
    Ok(v)
}

/// The four combinations of (RCut, SCut), as Tables 1-4 order them.
const CUTS: [(bool, bool); 4] = [(false, false), (false, true), (true, false), (true, true)];

fn onoff(b: bool) -> &'static str {
    if b {
        "on"
    } else {
        "off"
    }
}

/// Runs both tables into `dir`; returns a summary.
pub fn run(dir: &Path, opts: &Settings) -> Result<String> {
    let instances = instances(opts.quick)?;
    let mut summary = String::new();
    // Tables 1-4: every instance under the four combinations of the cuts.
    let mut solves = String::from("family,instance,hosts,rcut,scut,solve_s,nodes,proven,time_s\n");
    let mut solve_rows = Vec::new();
    let mut optimal = Vec::new();
    for inst in &instances {
        let p = Problem::new(&inst.topology, 0, SIZE)?;
        for (rcut, scut) in CUTS {
            let o = Options {
                rcut,
                scut,
                time_limit_s: opts.time_limit_s,
                ..Options::default()
            };
            let s = treebcast::solve(&p, &o);
            let _ = writeln!(
                solves,
                "{},{},{},{},{},{:.6},{},{},{:.9}",
                inst.family,
                inst.name,
                p.hosts,
                onoff(rcut),
                onoff(scut),
                s.solve_s,
                s.nodes_explored,
                s.proven_optimal,
                s.time_s
            );
            solve_rows.push((inst.family, p.hosts, rcut, scut, s.solve_s));
            if rcut && scut {
                optimal.push((s.time_s, s.proven_optimal));
            }
        }
    }
    super::write(dir, "solve_times.csv", &solves)?;
    // Tables 5-6: the optimum against the built-in broadcasts, roots 0 and 1.
    let mut times = String::from("family,instance,algorithm,root,time_s\n");
    let mut time_rows = Vec::new();
    for (inst, &(opt0, _)) in instances.iter().zip(&optimal) {
        let hosts = inst.topology.num_ranks();
        let mut row = |alg: &str, root: usize, t: f64| {
            let _ = writeln!(times, "{},{},{alg},{root},{t:.9}", inst.family, inst.name);
            time_rows.push((inst.family, hosts, format!("{alg} root {root}"), t));
        };
        row("optimal", 0, opt0);
        let p1 = Problem::new(&inst.topology, 1, SIZE)?;
        let o1 = treebcast::solve(
            &p1,
            &Options {
                time_limit_s: opts.time_limit_s,
                ..Options::default()
            },
        );
        row("optimal", 1, o1.time_s);
        use crate::algorithms::bcast;
        for alg in [&bcast::binomial::ALGORITHM, &bcast::binary::ALGORITHM] {
            for root in [0, 1] {
                row(
                    alg.name,
                    root,
                    treebcast::baseline(&inst.topology, alg, root, SIZE)?,
                );
            }
        }
        for alg in [
            &bcast::scatter_allgather::ALGORITHM,
            &bcast::pipeline::ALGORITHM,
        ] {
            row(
                alg.name,
                0,
                treebcast::baseline(&inst.topology, alg, 0, SIZE)?,
            );
        }
    }
    super::write(dir, "bcast_times.csv", &times)?;
    // Plots: one per family and table.
    for family in ["star", "dual_cpu", "clusters", "unequal_clusters"] {
        let mut series = Vec::new();
        for (rcut, scut) in CUTS {
            series.push(Series {
                name: format!("RCut {} SCut {}", onoff(rcut), onoff(scut)),
                points: solve_rows
                    .iter()
                    .filter(|r| r.0 == family && r.2 == rcut && r.3 == scut)
                    .map(|r| (r.1 as f64, r.4.max(1e-6)))
                    .collect(),
            });
        }
        plot::line_chart(
            &dir.join(format!("solve_times_{family}")),
            &format!("Optimal broadcast: solve time ({family}, 1 MiB)"),
            ("hosts", Scale::Linear),
            ("solve time (s)", Scale::Log),
            &series,
        )?;
        let mut names: Vec<String> = time_rows
            .iter()
            .filter(|r| r.0 == family)
            .map(|r| r.2.clone())
            .collect();
        names.sort();
        names.dedup();
        let series: Vec<Series> = names
            .iter()
            .map(|n| Series {
                name: n.clone(),
                points: time_rows
                    .iter()
                    .filter(|r| r.0 == family && &r.2 == n)
                    .map(|r| (r.1 as f64, r.3 * 1e3))
                    .collect(),
            })
            .collect();
        plot::line_chart(
            &dir.join(format!("bcast_times_{family}")),
            &format!("1 MiB broadcast time ({family})"),
            ("hosts", Scale::Linear),
            ("time (ms)", Scale::Linear),
            &series,
        )?;
    }
    let proven = optimal.iter().filter(|o| o.1).count();
    let slowest = solve_rows
        .iter()
        .filter(|r| r.2 && r.3)
        .map(|r| r.4)
        .fold(0.0, f64::max);
    let _ = writeln!(
        summary,
        "{} instances, {proven} proven optimal with both cuts; slowest solve with both cuts {slowest:.3} s",
        instances.len()
    );
    for (inst, &(t, _)) in instances.iter().zip(&optimal) {
        let bin0 = time_rows
            .iter()
            .find(|r| {
                r.0 == inst.family && r.1 == inst.topology.num_ranks() && r.2 == "binomial root 0"
            })
            .map_or(f64::NAN, |r| r.3);
        let _ = writeln!(
            summary,
            "  {:17} {:12} optimal {:8.3} ms   binomial root 0 {:8.3} ms",
            inst.family,
            inst.name,
            t * 1e3,
            bin0 * 1e3
        );
    }
    Ok(summary)
}
