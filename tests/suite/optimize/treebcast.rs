//! The optimal tree broadcast: the solver against an independent exhaustive
//! search of every sequence, with and without each pruning; AHU labels
//! against brute-force isomorphism; the 3-PARTITION reduction; the optimal
//! schedule verified and simulated to its own time.

use topocoll::optimize::iso::{Labeller, Rooted};
use topocoll::optimize::treebcast::{self, Options, Problem};
use topocoll::schedule::verify;
use topocoll::sim::{simulate, Sharing, SimConfig};
use topocoll::topology::{Duplex, EdgeSpec, Graph, Kind, NodeKind, NodeSpec, Topology};

use topocoll_testkit::Rng;

fn tree(nodes: Vec<NodeSpec>, edges: Vec<EdgeSpec>) -> Topology {
    let g = Graph::tree(&nodes, &edges, 1.0, 0.0).unwrap();
    Topology::from_kind("test tree", Kind::Tree(g))
}

fn host(name: String) -> NodeSpec {
    NodeSpec {
        name,
        kind: NodeKind::Host,
    }
}

fn switch(name: String) -> NodeSpec {
    NodeSpec {
        name,
        kind: NodeKind::Switch,
    }
}

/// A random tree of `hosts` hosts and `switches` switches: each node after
/// the first hangs off an earlier one; bandwidths and latencies per
/// direction from small sets (so that symmetries and ties occur), some
/// edges half duplex.
fn random_tree(rng: &mut Rng, hosts: usize, switches: usize) -> Topology {
    let n = hosts + switches;
    // Node 0 is a host; `switches` of the others, chosen at random, are
    // switches.
    let mut others: Vec<usize> = (1..n).collect();
    for i in (1..others.len()).rev() {
        others.swap(i, rng.index(i + 1));
    }
    let mut kinds = vec![false; n];
    for &i in &others[..switches] {
        kinds[i] = true;
    }
    let nodes: Vec<NodeSpec> = (0..n)
        .map(|i| {
            if kinds[i] {
                switch(format!("s{i}"))
            } else {
                host(format!("h{i}"))
            }
        })
        .collect();
    let bws = [1.0, 1.0, 2.0, 3.0];
    let lats = [0.0, 0.0, 0.1, 0.5];
    let edges = (1..n)
        .map(|i| {
            let half = rng.index(4) == 0;
            let mut e = EdgeSpec {
                a: nodes[i].name.clone(),
                b: nodes[rng.index(i)].name.clone(),
                ..Default::default()
            };
            if half {
                e.duplex = Duplex::Half;
                e.bandwidth = Some(rng.pick(&bws));
                e.latency = Some(rng.pick(&lats));
            } else {
                e.bandwidth_ab = Some(rng.pick(&bws));
                e.bandwidth_ba = Some(rng.pick(&bws));
                e.latency_ab = Some(rng.pick(&lats));
                e.latency_ba = Some(rng.pick(&lats));
            }
            e
        })
        .collect();
    tree(nodes, edges)
}

/// A random tree with symmetry: `copies` copies of one random small subtree
/// (same shape, kinds and parameters) around a centre, so that the
/// symmetry cuts have work to do.
fn symmetric_tree(rng: &mut Rng) -> Topology {
    loop {
        let copies = 2 + rng.index(2);
        let m = 1 + rng.index(3);
        let centre_host = rng.index(2) == 0;
        let parent: Vec<usize> = (0..m)
            .map(|i| if i == 0 { 0 } else { rng.index(i) })
            .collect();
        let is_host: Vec<bool> = (0..m).map(|i| i == m - 1 || rng.index(3) != 0).collect();
        let hosts = centre_host as usize + copies * is_host.iter().filter(|&&h| h).count();
        if !(2..=6).contains(&hosts) {
            continue;
        }
        let bws = [1.0, 2.0, 3.0];
        let lats = [0.0, 0.1, 0.5];
        let params: Vec<EdgeSpec> = (0..m)
            .map(|_| {
                if rng.index(4) == 0 {
                    EdgeSpec {
                        duplex: Duplex::Half,
                        bandwidth: Some(rng.pick(&bws)),
                        latency: Some(rng.pick(&lats)),
                        ..Default::default()
                    }
                } else {
                    EdgeSpec {
                        bandwidth_ab: Some(rng.pick(&bws)),
                        bandwidth_ba: Some(rng.pick(&bws)),
                        latency_ab: Some(rng.pick(&lats)),
                        latency_ba: Some(rng.pick(&lats)),
                        ..Default::default()
                    }
                }
            })
            .collect();
        let mut nodes = vec![if centre_host {
            host("c".into())
        } else {
            switch("c".into())
        }];
        let mut edges = Vec::new();
        for c in 0..copies {
            for i in 0..m {
                let name = format!("n{c}_{i}");
                nodes.push(if is_host[i] {
                    host(name.clone())
                } else {
                    switch(name.clone())
                });
                let up = if i == 0 {
                    "c".to_string()
                } else {
                    format!("n{c}_{}", parent[i])
                };
                edges.push(EdgeSpec {
                    a: name,
                    b: up,
                    ..params[i].clone()
                });
            }
        }
        return tree(nodes, edges);
    }
}

/// The model, written again from its definition: bookings as a flat list,
/// the earliest start found among the candidate instants (the earliest
/// allowed one, and every instant at which a hop's window would begin just
/// as a booking on it ends), each checked at every point where the load
/// can rise.
struct Reference<'t> {
    topo: &'t Topology,
    size: f64,
}

#[derive(Clone, Copy)]
struct Booking {
    link: u32,
    start: f64,
    end: f64,
    rate: f64,
}

impl Reference<'_> {
    /// Hops of s → r as (link, offset), the bottleneck rate.
    fn path(&self, s: usize, r: usize) -> (Vec<(u32, f64)>, f64) {
        let mut route = Vec::new();
        self.topo.route(s, r, &mut route);
        let mut off = 0.0;
        let hops = route
            .iter()
            .map(|&l| {
                off += self.topo.links[l as usize].latency;
                (l, off)
            })
            .collect();
        let rate = route
            .iter()
            .map(|&l| self.topo.links[l as usize].bandwidth)
            .fold(f64::INFINITY, f64::min);
        (hops, rate)
    }

    fn fits(&self, booked: &[Booking], hops: &[(u32, f64)], rate: f64, dur: f64, t0: f64) -> bool {
        let eps = |t: f64| 1e-12 * t.abs().max(1e-9);
        hops.iter().all(|&(l, off)| {
            let (a, b) = (t0 + off, t0 + off + dur);
            let mine: Vec<&Booking> = booked
                .iter()
                .filter(|k| k.link == l && k.start < b - eps(b) && k.end > a + eps(a))
                .collect();
            let cap = self.topo.links[l as usize].bandwidth * (1.0 + 1e-9);
            std::iter::once(a)
                .chain(mine.iter().map(|k| k.start.max(a)))
                .all(|x| {
                    let load: f64 = mine
                        .iter()
                        .filter(|k| k.start <= x + eps(x) && k.end > x + eps(x))
                        .map(|k| k.rate)
                        .sum();
                    load + rate <= cap
                })
        })
    }

    fn earliest(
        &self,
        booked: &[Booking],
        hops: &[(u32, f64)],
        rate: f64,
        dur: f64,
        t: f64,
    ) -> f64 {
        let mut cands = vec![t];
        for k in booked {
            for &(l, off) in hops {
                if k.link == l && k.end - off > t {
                    cands.push(k.end - off);
                }
            }
        }
        cands.sort_by(f64::total_cmp);
        cands
            .into_iter()
            .find(|&t0| self.fits(booked, hops, rate, dur, t0))
            .expect("the last booking's end always fits")
    }

    /// The least broadcast time over every sequence of transfers.
    fn best(&self, recv: &mut Vec<f64>, booked: &mut Vec<Booking>, t_last: f64) -> f64 {
        let n = recv.len();
        if recv.iter().all(|t| t.is_finite()) {
            return recv.iter().copied().fold(0.0, f64::max);
        }
        let mut best = f64::INFINITY;
        for s in 0..n {
            if !recv[s].is_finite() {
                continue;
            }
            for r in 0..n {
                if recv[r].is_finite() {
                    continue;
                }
                let (hops, rate) = self.path(s, r);
                let dur = self.size / rate;
                let t0 = self.earliest(booked, &hops, rate, dur, recv[s].max(t_last));
                let before = booked.len();
                booked.extend(hops.iter().map(|&(l, off)| Booking {
                    link: l,
                    start: t0 + off,
                    end: t0 + off + dur,
                    rate,
                }));
                recv[r] = t0 + hops.last().map_or(0.0, |h| h.1) + dur;
                best = best.min(self.best(recv, booked, t0));
                recv[r] = f64::INFINITY;
                booked.truncate(before);
            }
        }
        best
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

fn all_options() -> Vec<Options> {
    let mut v = Vec::new();
    for bits in 0..16 {
        v.push(Options {
            rcut: bits & 1 != 0,
            scut: bits & 2 != 0,
            bound: bits & 4 != 0,
            memo: bits & 8 != 0,
            time_limit_s: 600.0,
            deadline: None,
        });
    }
    v
}

#[test]
fn the_solver_finds_the_exhaustive_optimum_with_every_pruning_on_or_off() {
    let mut rng = Rng::new(0x005e_ed0f_72ee);
    let mut checked = 0;
    for case in 0..140 {
        // Half the trees random, half with symmetric branches.
        let topo = if case % 2 == 0 {
            let switches = rng.index(4);
            random_tree(&mut rng, 2 + case / 2 % 5, switches)
        } else {
            symmetric_tree(&mut rng)
        };
        let hosts = topo.num_ranks();
        let switches = topo.num_nodes - hosts;
        let root = rng.index(hosts);
        let size = 1 + rng.index(3) as u64;
        let reference = Reference {
            topo: &topo,
            size: size as f64,
        };
        let mut recv = vec![f64::INFINITY; hosts];
        recv[root] = 0.0;
        let want = reference.best(&mut recv, &mut Vec::new(), 0.0);
        let p = Problem::new(&topo, root, size).unwrap();
        assert!(
            p.lower_bound() <= want * (1.0 + 1e-9),
            "case {case}: bound {} above the optimum {want}",
            p.lower_bound()
        );
        for o in all_options() {
            let sol = treebcast::solve(&p, &o);
            assert!(sol.proven_optimal, "case {case} {o:?}");
            assert!(
                close(sol.time_s, want),
                "case {case} ({hosts} hosts, {switches} switches, root {root}) {o:?}: solver {} exhaustive {want}",
                sol.time_s
            );
            // The schedule it reports has the time it claims.
            let seq: Vec<(usize, usize)> = sol.transfers.iter().map(|t| (t.from, t.to)).collect();
            assert!(close(p.evaluate(&seq).unwrap().time_s, sol.time_s));
            checked += 1;
        }
    }
    assert_eq!(checked, 140 * 16);
}

#[test]
fn the_heuristic_is_never_below_the_optimum_and_the_bound_never_above() {
    let mut rng = Rng::new(0xabcdef12345);
    for case in 0..40 {
        let hosts = 3 + case % 5;
        let switches = rng.index(3);
        let topo = random_tree(&mut rng, hosts, switches);
        let p = Problem::new(&topo, 0, 1).unwrap();
        let opt = treebcast::solve(&p, &Options::default());
        let h = treebcast::heuristic(&p);
        assert!(h.time_s >= opt.time_s * (1.0 - 1e-12), "case {case}");
        assert!(
            opt.lower_bound_s <= opt.time_s * (1.0 + 1e-12),
            "case {case}"
        );
    }
}

/// Random labelled trees: a node label from {0, 1}, a label per direction
/// of every edge from {0, 1, 2}.
fn labelled_tree(rng: &mut Rng, n: usize) -> (Vec<Vec<u32>>, Vec<u64>, Vec<Vec<u32>>) {
    let mut adj = vec![Vec::new(); n];
    let mut lab = vec![vec![0u32; n]; n];
    for i in 1..n {
        let j = rng.index(i);
        adj[i].push(j as u32);
        adj[j].push(i as u32);
        lab[i][j] = rng.index(3) as u32;
        lab[j][i] = rng.index(3) as u32;
    }
    let nodes = (0..n).map(|_| rng.index(2) as u64).collect();
    (adj, nodes, lab)
}

fn isomorphic(
    a: &(Vec<Vec<u32>>, Vec<u64>, Vec<Vec<u32>>),
    b: &(Vec<Vec<u32>>, Vec<u64>, Vec<Vec<u32>>),
) -> bool {
    let n = a.0.len();
    if n != b.0.len() {
        return false;
    }
    let mut perm: Vec<usize> = (0..n).collect();
    // Heap's algorithm over all permutations.
    fn check(
        a: &(Vec<Vec<u32>>, Vec<u64>, Vec<Vec<u32>>),
        b: &(Vec<Vec<u32>>, Vec<u64>, Vec<Vec<u32>>),
        p: &[usize],
    ) -> bool {
        (0..p.len()).all(|v| a.1[v] == b.1[p[v]])
            && (0..p.len()).all(|v| {
                a.0[v].iter().all(|&u| {
                    b.0[p[v]].contains(&(p[u as usize] as u32))
                        && a.2[v][u as usize] == b.2[p[v]][p[u as usize]]
                })
            })
    }
    let mut c = vec![0; n];
    if check(a, b, &perm) {
        return true;
    }
    let mut i = 0;
    while i < n {
        if c[i] < i {
            if i % 2 == 0 {
                perm.swap(0, i);
            } else {
                perm.swap(c[i], i);
            }
            if check(a, b, &perm) {
                return true;
            }
            c[i] += 1;
            i = 0;
        } else {
            c[i] = 0;
            i += 1;
        }
    }
    false
}

#[test]
fn ahu_labels_are_equal_exactly_for_isomorphic_labelled_trees() {
    let mut rng = Rng::new(0x1234_5678_9abc);
    let mut labeller = Labeller::default();
    let (mut same, mut different) = (0, 0);
    for case in 0..400 {
        let n = 1 + case % 7;
        let a = labelled_tree(&mut rng, n);
        // Either a random relabelling of the same tree or another tree.
        let b = if rng.index(2) == 0 {
            let mut p: Vec<usize> = (0..n).collect();
            for i in (1..n).rev() {
                p.swap(i, rng.index(i + 1));
            }
            let mut adj = vec![Vec::new(); n];
            let mut lab = vec![vec![0u32; n]; n];
            let mut nodes = vec![0; n];
            for v in 0..n {
                nodes[p[v]] = a.1[v];
                for &u in &a.0[v] {
                    adj[p[v]].push(p[u as usize] as u32);
                    lab[p[v]][p[u as usize]] = a.2[v][u as usize];
                }
            }
            (adj, nodes, lab)
        } else {
            labelled_tree(&mut rng, n)
        };
        let canon = |t: &(Vec<Vec<u32>>, Vec<u64>, Vec<Vec<u32>>), l: &mut Labeller| {
            let edge_ids: Vec<Vec<u32>> = t.2.clone();
            let rooted = Rooted::at_centre(&t.0, |x, y| {
                edge_ids[x as usize][y as usize] * 3 + edge_ids[y as usize][x as usize]
            });
            l.canonical(&rooted, &t.1)
        };
        let equal = canon(&a, &mut labeller) == canon(&b, &mut labeller);
        assert_eq!(equal, isomorphic(&a, &b), "case {case}: {a:?} / {b:?}");
        if equal {
            same += 1;
        } else {
            different += 1;
        }
    }
    assert!(same > 150 && different > 100, "{same} / {different}");
}

/// The paper's reduction (its Fig. 4): m holders on edges of bandwidth B,
/// 3m receivers on edges of bandwidth a_i, all around one switch, no
/// latency, one byte. Every receiver holds the message by 1 / min a_i
/// exactly when the a_i split into m triples of sum B.
fn three_partition(a: &[f64], b: f64) -> f64 {
    let m = a.len() / 3;
    let mut nodes = vec![switch("hub".into())];
    let mut edges = Vec::new();
    for i in 0..m + a.len() {
        nodes.push(host(format!("n{i}")));
        edges.push(EdgeSpec {
            a: format!("n{i}"),
            b: "hub".into(),
            bandwidth: Some(if i < m { b } else { a[i - m] }),
            latency: Some(0.0),
            ..Default::default()
        });
    }
    let topo = tree(nodes, edges);
    let sources: Vec<usize> = (0..m).collect();
    let p = Problem::with_sources(&topo, &sources, 1).unwrap();
    let sol = treebcast::solve(&p, &Options::default());
    assert!(sol.proven_optimal);
    sol.time_s
}

#[test]
fn three_partition_instances_get_the_optimum_the_reduction_predicts() {
    // Yes: {4, 5, 6} twice (B = 15).
    let yes = three_partition(&[4.0, 5.0, 6.0, 6.0, 5.0, 4.0], 15.0);
    assert!(close(yes, 1.0 / 4.0), "{yes}");
    // Yes, m = 3, B = 20: {6, 6, 8}, {7, 7, 6}, {7, 7, 6}.
    let yes3 = three_partition(&[6.0, 7.0, 7.0, 6.0, 8.0, 7.0, 6.0, 7.0, 6.0], 20.0);
    assert!(close(yes3, 1.0 / 6.0), "{yes3}");
    // No: no triple of {4, 4, 4, 6, 6, 6} sums to 15.
    let no = three_partition(&[4.0, 4.0, 4.0, 6.0, 6.0, 6.0], 15.0);
    assert!(no > 0.25 * (1.0 + 1e-6), "{no}");
}

fn dual_cpu_cluster() -> Topology {
    topocoll::topology::parse_spec(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/dual-cpu-cluster.toml"
    ))
    .unwrap()
}

#[test]
fn the_optimal_schedule_verifies_and_simulates_to_its_own_time() {
    let mut rng = Rng::new(0x77);
    let mut topos: Vec<Topology> = vec![dual_cpu_cluster()];
    for case in 0..25 {
        let switches = rng.index(4);
        topos.push(random_tree(&mut rng, 2 + case % 6, switches));
    }
    for (k, topo) in topos.iter().enumerate() {
        let root = k % topo.num_ranks();
        let size = if k == 0 { 1 << 20 } else { 1 + k as u64 };
        let p = Problem::new(topo, root, size).unwrap();
        let sol = treebcast::solve(&p, &Options::default());
        assert!(sol.proven_optimal);
        let s = treebcast::to_schedule(&p, &sol);
        verify(&s).unwrap();
        let cfg = SimConfig {
            sharing: Sharing::Reservation,
            engines: 64,
            ..SimConfig::default()
        };
        let r = simulate(&s, topo, &cfg).unwrap();
        assert!(
            (r.time_s - sol.time_s).abs() <= 1e-9 * sol.time_s,
            "topology {k}: simulated {} solver {}",
            r.time_s,
            sol.time_s
        );
        // Every host finishes when its last transfer, in or out, ends.
        for h in 0..topo.num_ranks() {
            let want = sol
                .transfers
                .iter()
                .filter(|t| t.to == h || t.from == h)
                .map(|t| t.end_s)
                .fold(0.0, f64::max);
            assert!(
                (r.rank_finish_s[h] - want).abs() <= 1e-9 * sol.time_s,
                "topology {k} host {h}: {} against {want}",
                r.rank_finish_s[h]
            );
        }
    }
}

use crate::common::topocoll;

const DUAL: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/examples/dual-cpu-cluster.toml"
);

#[test]
fn optimize_prints_json_writes_a_schedule_that_verifies_simulates_and_runs() {
    let dir = std::env::temp_dir().join(format!("topocoll-optimize-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("opt.json");
    let out = out.to_str().unwrap();
    let (code, stdout, stderr) = topocoll(&[
        "optimize",
        "--whole-message",
        "--topology",
        DUAL,
        "--collective",
        "bcast",
        "--root",
        "cpu1b",
        "--size",
        "1MiB",
        "--format",
        "json",
        "--schedule-out",
        out,
    ]);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let time = v["time_s"].as_f64().unwrap();
    assert_eq!(v["root"], 3);
    assert_eq!(v["proven_optimal"], true);
    assert!(v["nodes_explored"].as_u64().is_some() && v["solve_s"].as_f64().is_some());
    let transfers = v["transfers"].as_array().unwrap();
    assert_eq!(transfers.len(), 7);
    let last = transfers
        .iter()
        .map(|t| t["end_s"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert_eq!(last, time);
    for alg in ["binomial", "binary", "scatter_allgather", "pipeline"] {
        assert!(v["baselines"][alg].as_f64().unwrap() > 0.0, "{alg}");
    }
    let (code, _, stderr) = topocoll(&["verify", "--schedule", out]);
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, stderr) = topocoll(&[
        "simulate",
        "--topology",
        DUAL,
        "--schedule",
        out,
        "--sharing",
        "reservation",
        "--engines",
        "64",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let sim: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let simulated = sim["time_s"].as_f64().unwrap();
    assert!(
        (simulated - time).abs() <= 1e-9 * time,
        "{simulated} {time}"
    );
    let (code, stdout, stderr) = topocoll(&["run", "--schedule", out, "--check"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("bit-identical"), "{stdout}");
    // Text output names the transfers and the baselines.
    let (code, stdout, _) = topocoll(&[
        "optimize",
        "--whole-message",
        "-t",
        DUAL,
        "-c",
        "bcast",
        "-s",
        "64KiB",
    ]);
    assert_eq!(code, 0);
    assert!(
        stdout.contains("proven optimal")
            && stdout.contains("0 -> ")
            && stdout.contains("binomial")
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn optimize_refuses_bad_input_with_one_line_and_exit_2() {
    for (args, needle) in [
        (vec!["-t", "torus:4x4", "-c", "bcast", "-s", "1KiB"], "tree"),
        (
            vec!["-t", DUAL, "-c", "bcast", "-s", "1KiB", "--root", "switch"],
            "switch",
        ),
        (
            vec!["-t", DUAL, "-c", "bcast", "-s", "1KiB", "--root", "8"],
            "not a rank",
        ),
        (
            vec!["-t", DUAL, "-c", "bcast", "-s", "1KiB", "--root", "nobody"],
            "neither",
        ),
        (vec!["-t", DUAL, "-c", "allreduce", "-s", "1KiB"], "bcast"),
        (vec!["-t", DUAL, "-c", "bcast", "-s", "0"], "size"),
        (
            vec!["-t", DUAL, "-c", "bcast", "-s", "1KiB", "--time-limit", "0"],
            "time-limit",
        ),
        (
            vec!["-t", DUAL, "-c", "bcast", "-s", "1KiB", "--format", "xml"],
            "format",
        ),
    ] {
        let mut full = vec!["optimize", "--whole-message"];
        full.extend(args.iter());
        let (code, stdout, stderr) = topocoll(&full);
        assert_eq!(code, 2, "{args:?}: {stdout} {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
    // A graph file whose edges close a cycle is not a tree.
    let (code, _, stderr) = topocoll(&[
        "optimize",
        "--whole-message",
        "-t",
        concat!(env!("CARGO_MANIFEST_DIR"), "/examples/ring-graph.toml"),
        "-c",
        "bcast",
        "-s",
        "1KiB",
    ]);
    assert_eq!(code, 2);
    assert!(stderr.contains("tree"), "{stderr}");
}

#[test]
fn the_example_file_is_the_reproductions_unequal_clusters() {
    use topocoll::reproduce::treebcast as fam;
    let file = topocoll::topology::parse_spec(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/unequal-clusters.toml"
    ))
    .unwrap();
    let built = fam::clusters(3, fam::FAST, "2x3x(1+1)".into()).unwrap();
    let solve = |t: &Topology| {
        let p = Problem::new(t, 0, fam::SIZE).unwrap();
        treebcast::solve(&p, &Options::default())
    };
    let (a, b) = (solve(&file), solve(&built));
    assert!(a.proven_optimal && b.proven_optimal);
    assert_eq!(a.time_s, b.time_s);
    // One transfer crosses into the Gigabit cluster first, as in the paper.
    assert_eq!((a.transfers[0].from, a.transfers[0].to), (0, 6));
}

/// A tree file of `hosts` hosts: on one switch (a star), or in a chain.
fn tree_file(hosts: usize, star: bool) -> String {
    let mut t = String::from("kind = \"tree\"\nbandwidth = 1e8\nlatency = 5e-5\n");
    if star {
        t += "[[node]]\nname = \"sw\"\nkind = \"switch\"\n";
    }
    for h in 0..hosts {
        t += &format!("[[node]]\nname = \"h{h}\"\n");
    }
    for h in 0..hosts {
        match (star, h) {
            (true, _) => t += &format!("[[edge]]\na = \"h{h}\"\nb = \"sw\"\n"),
            (false, 0) => {}
            (false, _) => t += &format!("[[edge]]\na = \"h{}\"\nb = \"h{h}\"\n", h - 1),
        }
    }
    t
}

#[test]
fn the_tables_are_counted_and_refused_before_they_are_built() {
    let chain = topocoll::topology::parse_toml("chain.toml", &tree_file(1000, false)).unwrap();
    let star = topocoll::topology::parse_toml("star.toml", &tree_file(8191, true)).unwrap();
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    let (c, s) = (
        Problem::estimate_bytes(&chain).unwrap(),
        Problem::estimate_bytes(&star).unwrap(),
    );
    // The chain's pairs are 333 hops apart on average: its hops dominate.
    assert!((4.0..6.0).contains(&gib(c)), "chain {:.2} GiB", gib(c));
    assert!((4.0..6.0).contains(&gib(s)), "star {:.2} GiB", gib(s));
    // A small tree's estimate covers what it builds (a few KiB).
    let small = topocoll::topology::parse_toml("s.toml", &tree_file(8, true)).unwrap();
    assert!(Problem::estimate_bytes(&small).unwrap() > 8 * 8 * 48);
    let t0 = std::time::Instant::now();
    let limits = treebcast::Limits {
        deadline: None,
        memory_bytes: Some(1 << 30),
    };
    let e = Problem::within(&star, &[0], 1 << 20, &limits)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("8191 hosts need") && e.contains("GiB allowed"),
        "{e}"
    );
    assert!(
        t0.elapsed().as_secs_f64() < 1.0,
        "refused only after the work"
    );
    // A deadline already past stops the building.
    let limits = treebcast::Limits {
        deadline: Some(std::time::Instant::now()),
        memory_bytes: None,
    };
    let e = Problem::within(&chain, &[0], 1 << 20, &limits)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("time-limit ran out while"), "{e}");
}

#[test]
fn optimize_keeps_its_time_limit_from_the_start() {
    let path = std::env::temp_dir().join(format!("topocoll-star3000-{}.toml", std::process::id()));
    std::fs::write(&path, tree_file(3000, true)).unwrap();
    let t0 = std::time::Instant::now();
    let (code, out, err) = crate::common::topocoll(&[
        "optimize",
        "--whole-message",
        "-t",
        path.to_str().unwrap(),
        "-c",
        "bcast",
        "-s",
        "1MiB",
        "--time-limit",
        "1",
    ]);
    let took = t0.elapsed().as_secs_f64();
    std::fs::remove_file(&path).ok();
    // Either it had a schedule in time (and left the baselines it could
    // not price out) or it says the limit ran out: within the limit and
    // the time to exit, never the 35 s of the whole job.
    assert!(took < 4.0, "took {took:.1} s");
    match code {
        0 => assert!(out.contains("not priced: the time limit ran out"), "{out}"),
        _ => {
            assert_eq!(code, 2, "{err}");
            assert!(err.starts_with("topocoll: --time-limit ran out"), "{err}");
            assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        }
    }
}

/// Solves `topo` from rank 0 with the paper's 1 MiB and the cuts as given.
fn solve_with_cuts(topo: &Topology, rcut: bool, scut: bool) -> treebcast::Solution {
    let p = Problem::new(topo, 0, topocoll::reproduce::treebcast::SIZE).unwrap();
    treebcast::solve(
        &p,
        &Options {
            rcut,
            scut,
            ..Options::default()
        },
    )
}

#[test]
fn rcut_and_scut_explore_fewer_nodes_for_the_same_optimum() {
    use topocoll::reproduce::treebcast as fam;
    // RCut on the paper's networks: equivalent receivers are tried once.
    for topo in [
        fam::dual_cpu(4).unwrap(),
        fam::clusters(2, fam::FAST, "2x2x(1+1)".into()).unwrap(),
    ] {
        let (off, on) = (
            solve_with_cuts(&topo, false, false),
            solve_with_cuts(&topo, true, false),
        );
        assert!(off.proven_optimal && on.proven_optimal, "{}", topo.name);
        assert!(close(off.time_s, on.time_s), "{}", topo.name);
        assert!(
            on.nodes_explored < off.nodes_explored,
            "{}: RCut {} nodes, without {}",
            topo.name,
            on.nodes_explored,
            off.nodes_explored
        );
    }
    // SCut where holders share a state: on 2x8 two holders receive at the
    // same instant, and it saves nodes beside RCut.
    let topo = fam::dual_cpu(8).unwrap();
    let (off, on) = (
        solve_with_cuts(&topo, true, false),
        solve_with_cuts(&topo, true, true),
    );
    assert!(off.proven_optimal && on.proven_optimal);
    assert!(close(off.time_s, on.time_s));
    assert!(
        on.nodes_explored < off.nodes_explored,
        "SCut {} nodes, without {}",
        on.nodes_explored,
        off.nodes_explored
    );
}

#[test]
fn no_bound_searches_even_where_the_heuristic_meets_the_bound() {
    use topocoll::reproduce::treebcast as fam;
    // On a star of 8 the heuristic meets the lower bound: with the bounds
    // the search stops there, without them it prunes by the makespan
    // alone and proves the same optimum by searching.
    let topo = fam::star(8).unwrap();
    let p = Problem::new(&topo, 0, fam::SIZE).unwrap();
    let with = treebcast::solve(&p, &Options::default());
    let without = treebcast::solve(
        &p,
        &Options {
            bound: false,
            ..Options::default()
        },
    );
    assert!(with.proven_optimal && without.proven_optimal);
    assert_eq!(with.nodes_explored, 0);
    assert!(without.nodes_explored > 0);
    assert!(close(with.time_s, without.time_s));
}

#[test]
fn a_search_stopped_by_its_time_limit_is_not_proven() {
    use topocoll::reproduce::treebcast as fam;
    // Without the cuts, 2x3x(1+1) takes millions of nodes (seconds): a
    // limit of 0.2 s stops it with the best schedule found.
    let topo = fam::clusters(3, fam::FAST, "2x3x(1+1)".into()).unwrap();
    let p = Problem::new(&topo, 0, fam::SIZE).unwrap();
    let cut_short = treebcast::solve(
        &p,
        &Options {
            rcut: false,
            scut: false,
            time_limit_s: 0.2,
            ..Options::default()
        },
    );
    let optimum = treebcast::solve(&p, &Options::default());
    assert!(optimum.proven_optimal);
    assert!(!cut_short.proven_optimal);
    assert!(cut_short.nodes_explored > 0);
    assert!(cut_short.time_s >= optimum.time_s * (1.0 - 1e-12));
    assert!(cut_short.time_s <= cut_short.heuristic_s * (1.0 + 1e-12));
    // The schedule it returns has the time it claims.
    let seq: Vec<(usize, usize)> = cut_short.transfers.iter().map(|t| (t.from, t.to)).collect();
    assert!(close(p.evaluate(&seq).unwrap().time_s, cut_short.time_s));

    // The command line says so, in JSON and in text.
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/unequal-clusters.toml"
    );
    let args = |json: bool| {
        let mut v = vec![
            "optimize",
            "--whole-message",
            "-t",
            file,
            "-c",
            "bcast",
            "-s",
            "1MiB",
            "--no-rcut",
            "--no-scut",
            "--time-limit",
            "0.5",
        ];
        if json {
            v.extend(["--format", "json"]);
        }
        topocoll(&v)
    };
    let (code, stdout, stderr) = args(true);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["proven_optimal"], false, "{stdout}");
    assert!(v["nodes_explored"].as_u64().unwrap() > 0);
    assert!(v["time_s"].as_f64().unwrap() >= optimum.time_s * (1.0 - 1e-12));
    let (code, stdout, stderr) = args(false);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("best found, not proven: the 0.5 s time limit"),
        "{stdout}"
    );
}

#[test]
fn an_unproven_result_prices_the_baselines_against_the_best_found() {
    // 70 hosts get the heuristic alone, not proven (its gap to the bound
    // is not zero), with the baselines priced beside it.
    let path = std::env::temp_dir().join(format!("topocoll-star70-{}.toml", std::process::id()));
    std::fs::write(&path, tree_file(70, true)).unwrap();
    let run = |extra: &[&str]| {
        let mut v = vec![
            "optimize",
            "--whole-message",
            "-t",
            path.to_str().unwrap(),
            "-c",
            "bcast",
            "-s",
            "1MiB",
        ];
        v.extend(extra);
        topocoll(&v)
    };
    let (code, stdout, stderr) = run(&[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("heuristic, not proven"), "{stdout}");
    assert!(
        stdout.contains("binomial") && stdout.contains("x the best found"),
        "{stdout}"
    );
    assert!(!stdout.contains("the optimum"), "{stdout}");
    // A proven one, against the optimum.
    let (code, stdout, stderr) = topocoll(&[
        "optimize",
        "--whole-message",
        "-t",
        DUAL,
        "-c",
        "bcast",
        "-s",
        "1MiB",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("proven optimal") && stdout.contains("x the optimum"),
        "{stdout}"
    );
    std::fs::remove_file(&path).ok();
}

#[test]
fn optimize_refuses_the_other_models_flags_with_one_line_and_exit_2() {
    for (args, needle) in [
        (vec!["--whole-message", "--overhead", "1e-6"], "--overhead"),
        (vec!["--whole-message", "--sharing", "maxmin"], "--sharing"),
        (vec!["--whole-message", "--no-fold"], "--no-fold"),
        (vec!["--whole-message", "--fail", "x"], "--fail"),
        (vec!["--no-rcut"], "--no-rcut"),
    ] {
        let mut full = vec!["optimize", "-t", DUAL, "-c", "bcast", "-s", "1KiB"];
        full.extend(args.iter());
        let (code, stdout, stderr) = topocoll(&full);
        assert_eq!(code, 2, "{args:?}: {stdout} {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
}
