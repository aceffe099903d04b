//! The A2AT order in three dimensions (the paper's future work), used by
//! [`super::a2at`] when a grid has three dimensions of size > 1.
//!
//! The principle is the 2D one: every rank sends to signed offsets (i, j, k),
//! each send routed by its offset, and the engines take the sends in program
//! order; if every group of `engines` consecutive sends loads each link
//! direction it uses with the same number of hops H, then (all ranks doing the
//! same thing at the same time) every link of the group's directions carries H
//! flows, every flow runs at 1/H, the whole group ends together after H, and
//! the next group starts on all engines at once. The total is then the sum of
//! the groups' H, which is the per-direction link load: the bound.
//!
//! Torus (meant for 6 engines: ±x, ±y, ±z). With σ(i,j,k) = (j,k,i), the six
//! sends v, −v, σv, −σv, σ²v, −σ²v load each of the six directions with
//! |i|+|j|+|k| hops. On an N×N×N torus almost every destination falls into
//! such a group of six distinct nodes; half-ring components (±N/2, N even)
//! take the sign of their send, so v and −v go opposite ways. What is left:
//! - the diagonal pairs (i,i,i), (−i,−i,−i): two sends, balanced;
//! - N even: the seven nodes whose components are all 0 or N/2, which no
//!   sign makes into whole groups of six. They are sent as two balanced sets,
//!   Q = (h,0,0), (0,h,0), (0,0,h), (−h,−h,−h) and
//!   T = (h,h,0), (0,−h,h), (−h,0,−h) (h = N/2).
//!
//! These are chained so that groups of six stay aligned: Q with one diagonal
//! pair, the other diagonal pairs in threes, and the rest (T and up to two
//! pairs) last. The count works out on every cube except N ≡ 2 (mod 6), where
//! N³ − 1 ≡ 1 (mod 6): there the last 13 sends are regrouped so that the one
//! left over starts when an engine frees early (see [`torus_cube`]).
//!
//! Mesh (meant for 3 engines: x, y, z, as the 2D mesh uses 2). On a mesh the
//! middle link of a line of n nodes carries min(c, n−c) of the blocks at
//! cyclic offset c each way, whatever the sign; with τ(i,j,k) = (−j,−k,i) (the
//! 3D analogue of the paper's (i,j) → (−j,−i), of order 3) the triple v, τv,
//! τ²v loads x, y and z alike. Fixed points of τ, (i,−i,i), load all three
//! alike on their own and are sent three at a time.
//!
//! Other shapes (rectangles): a greedy on the same principle. Torus: the
//! destinations pair up as v, −v (balanced between + and − of every
//! dimension); pairs are grouped in threes (six sends), each time the heaviest
//! pair left with the two that make the group's hops on the critical
//! dimensions (those of the largest static load, which sets the bound) as
//! equal as possible and never below another dimension's. Mesh: the same with
//! single sends in threes. The half-ring-only nodes of a torus and the
//! leftovers come last.

use super::Wrap;
use std::collections::BTreeMap;

/// A signed offset (i, j, k).
pub type Offset = [i64; 3];

/// The signed representative of cyclic offset `c` in 0..n: c up to n/2
/// (the half ring as +n/2), c − n above.
fn signed(c: usize, n: usize) -> i64 {
    if 2 * c <= n {
        c as i64
    } else {
        c as i64 - n as i64
    }
}

/// Index of the node at offset `v` in an n0×n1×n2 grid (mod each side).
fn index(v: Offset, n: [usize; 3]) -> usize {
    let c = |d: usize| v[d].rem_euclid(n[d] as i64) as usize;
    (c(0) * n[1] + c(1)) * n[2] + c(2)
}

fn neg(v: Offset) -> Offset {
    [-v[0], -v[1], -v[2]]
}

/// σ(i,j,k) = (j,k,i).
fn rot(v: Offset) -> Offset {
    [v[1], v[2], v[0]]
}

/// τ(i,j,k) = (−j,−k,i), of order 3.
fn tau(v: Offset) -> Offset {
    [-v[1], -v[2], v[0]]
}

/// True when every component of `v` is 0 or a half ring.
fn half_only(v: Offset, n: [usize; 3]) -> bool {
    (0..3).all(|d| v[d] == 0 || 2 * v[d].unsigned_abs() as usize == n[d])
}

/// Every destination other than the sender, as signed representatives, the
/// nearest first (by largest component, then total hops, then value).
fn destinations(n: [usize; 3]) -> Vec<Offset> {
    let mut v = Vec::with_capacity(n[0] * n[1] * n[2]);
    for a in 0..n[0] {
        for b in 0..n[1] {
            for c in 0..n[2] {
                if (a, b, c) != (0, 0, 0) {
                    v.push([signed(a, n[0]), signed(b, n[1]), signed(c, n[2])]);
                }
            }
        }
    }
    v.sort_by_key(|o| {
        let m = o.iter().map(|x| x.abs()).max().unwrap();
        let s: i64 = o.iter().map(|x| x.abs()).sum();
        (m, s, *o)
    });
    v
}

/// The nodes whose components are all 0 or N/2, in two balanced sets: Q
/// (the axes one way, the far corner the other) and T (the face diagonals,
/// each direction once), with `h` the half ring of each dimension. Where a
/// dimension is odd, h = 0 there and the sets shrink to the 2D pattern
/// (h,0), (0,h), (−h,−h) or to the lone (h): entries that become the sender
/// or repeat a node are dropped, and what is left still splits every even
/// dimension's half rings evenly (with two or three even sides).
fn half_ring_sets(h: [i64; 3]) -> (Vec<Offset>, Vec<Offset>) {
    let q = [
        [h[0], 0, 0],
        [0, h[1], 0],
        [0, 0, h[2]],
        [-h[0], -h[1], -h[2]],
    ];
    let t = [[h[0], h[1], 0], [0, -h[1], h[2]], [-h[0], 0, -h[2]]];
    // With an odd dimension (h = 0 there) some entries are the sender
    // itself or repeat a node.
    let keep = |v: &&Offset| **v != [0, 0, 0];
    let mut q: Vec<Offset> = q.iter().filter(keep).copied().collect();
    let mut t: Vec<Offset> = t.iter().filter(keep).copied().collect();
    // Zero components collapse some entries onto one node: keep the first.
    let mut seen = Vec::new();
    for set in [&mut q, &mut t] {
        set.retain(|v| {
            let key: Vec<i64> = (0..3).map(|d| v[d].abs()).collect();
            if seen.contains(&key) {
                false
            } else {
                seen.push(key);
                true
            }
        });
    }
    (q, t)
}

/// The 3D send order of one rank: offsets along the three dimensions of an
/// n0×n1×n2 grid (each > 1 for a proper 3D grid; sizes of 1 work too).
/// The 6-engine torus variant, or the 3-engine mesh one. Every other node
/// appears exactly once (modulo the sides).
pub fn order(n: [usize; 3], wrap: Wrap) -> Vec<Offset> {
    assert!(n.iter().all(|&x| x >= 1), "a2at3d::order needs sides >= 1");
    let cube = n[0] == n[1] && n[1] == n[2] && n[0] > 1;
    match (wrap, cube) {
        (Wrap::Torus, true) => torus_cube(n[0]),
        (Wrap::Mesh, true) => mesh_cube(n[0]),
        (Wrap::Torus, false) => torus_greedy(n),
        (Wrap::Mesh, false) => mesh_greedy(n),
    }
}

/// N×N×N torus: groups of six v, −v, σv, −σv, σ²v, −σ²v, then the diagonal
/// pairs and the half-ring nodes chained into aligned groups.
pub fn torus_cube(n: usize) -> Vec<Offset> {
    if n == 2 {
        // Every send is half-ring, and the construction below leaves the
        // 2×2×2 torus at 3 for a bound of 2. This order (signs balanced, two
        // hops each way per dimension) was found by a random search over
        // balanced signs and orders with the simulator (6 engines, unit links
        // and blocks): 2, the bound.
        return vec![
            [-1, 0, -1],
            [-1, 0, 0],
            [1, 1, 0],
            [0, 0, 1],
            [0, -1, -1],
            [0, -1, 0],
            [1, 1, 1],
        ];
    }
    let dims = [n; 3];
    let mut done = vec![false; n * n * n];
    done[0] = true;
    let mut out = Vec::with_capacity(n * n * n - 1);
    let mut diag: Vec<[Offset; 2]> = Vec::new();
    for v in destinations(dims) {
        if done[index(v, dims)] || half_only(v, dims) {
            continue;
        }
        if v[0] == v[1] && v[1] == v[2] {
            diag.push([v, neg(v)]);
            for u in [v, neg(v)] {
                done[index(u, dims)] = true;
            }
            continue;
        }
        let (r, r2) = (rot(v), rot(rot(v)));
        let group = [v, neg(v), r, neg(r), r2, neg(r2)];
        for u in group {
            debug_assert!(!done[index(u, dims)]);
            done[index(u, dims)] = true;
        }
        out.extend(group);
    }
    // Farthest diagonal pairs first, the nearest last.
    diag.reverse();
    if n % 2 == 1 {
        for pair in diag {
            out.extend(pair);
        }
        return out;
    }
    let h = (n / 2) as i64;
    let (q, t) = half_ring_sets([h; 3]);
    // The farthest pair goes with Q (4 sends + 2), the others in threes, and
    // T with up to two pairs last (3, 5 or 7 sends).
    let far = diag.first().copied();
    let rest = diag.get(1..).unwrap_or_default();
    let whole = rest.len() / 3 * 3;
    let tail = &rest[whole..];
    if let (Some(far), &[b, a]) = (far, tail) {
        // Seven sends would leave one alone at the end (N ≡ 2 mod 6, where
        // N³ − 1 ≡ 1 mod 6). Instead the last 13 are regrouped (found by a
        // search over orders of the tail on 8×8×8; the test
        // a2at_3d_torus_tail_for_n_2_mod_6 checks it on 8×8×8 and 14×14×14):
        // (−h,0,−h), (0,−h,h) of T with (0,h,0), (h,0,0) of Q and the far
        // pair make a balanced six; then (h,h,0), b, (0,0,h), a load the +
        // directions h + |b| + |a| and the − ones |b| + |a| only, so the −
        // flows end first and free an engine for the corner (−h,−h,−h),
        // which brings the − directions up to the same total.
        for pair in &rest[..whole] {
            out.extend(pair);
        }
        out.extend([t[2], far[1], far[0], t[1], q[1], q[0]]);
        out.extend([t[0], b[0], b[1], q[2], a[1], a[0]]);
        out.push(q[3]);
        return out;
    }
    out.extend(&q);
    if let Some(pair) = far {
        out.extend(pair);
    }
    for pair in rest {
        out.extend(pair);
    }
    out.extend(&t);
    out
}

/// N×N×N mesh: triples v, τv, τ²v, then τ's fixed points three at a time.
pub fn mesh_cube(n: usize) -> Vec<Offset> {
    let dims = [n; 3];
    let mut done = vec![false; n * n * n];
    done[0] = true;
    let mut out = Vec::with_capacity(n * n * n - 1);
    let mut fixed = Vec::new();
    for v in destinations(dims) {
        if done[index(v, dims)] {
            continue;
        }
        let (a, b) = (tau(v), tau(tau(v)));
        if index(a, dims) == index(v, dims) {
            fixed.push(v);
            done[index(v, dims)] = true;
            continue;
        }
        for u in [v, a, b] {
            debug_assert!(!done[index(u, dims)]);
            done[index(u, dims)] = true;
        }
        // Representatives within the sides (a mesh route needs |c| < n).
        out.extend([v, a, b].map(|u| rep(u, dims)));
    }
    out.extend(fixed.into_iter().map(|u| rep(u, dims)));
    out
}

/// The signed representative of offset `v` (components reduced mod the sides).
fn rep(v: Offset, n: [usize; 3]) -> Offset {
    let c = |d: usize| signed(v[d].rem_euclid(n[d] as i64) as usize, n[d]);
    [c(0), c(1), c(2)]
}

/// Hops of one send per dimension, as the bound counts them: |c| on a torus
/// (the route takes |c| hops), min(c, n−c) on a mesh (what the middle link of
/// a line carries of the blocks at cyclic offset c, each way).
fn weight(v: Offset, n: [usize; 3], torus: bool) -> [i64; 3] {
    let mut w = [0i64; 3];
    for d in 0..3 {
        let c = v[d].rem_euclid(n[d] as i64);
        w[d] = if torus {
            v[d].abs()
        } else {
            c.min(n[d] as i64 - c)
        };
    }
    w
}

/// The dimensions whose static load sets the bound: ⌊n/2⌋⌈n/2⌉/n largest.
fn critical(n: [usize; 3]) -> [bool; 3] {
    // ⌊n/2⌋⌈n/2⌉·P/n compared across dimensions, times n0·n1·n2/P = 1.
    let load = |d: usize| {
        let others: usize = (0..3).filter(|&e| e != d).map(|e| n[e]).product();
        (n[d] / 2) * n[d].div_ceil(2) * others
    };
    let top = (0..3).map(load).max().unwrap();
    [load(0) == top, load(1) == top, load(2) == top]
}

/// How far a group with per-dimension hops `s` is from loading every
/// critical dimension alike with no other above them (0 when it does).
fn imbalance(s: [i64; 3], crit: [bool; 3]) -> i64 {
    let top = *s.iter().max().unwrap();
    let low = (0..3).filter(|&d| crit[d]).map(|d| s[d]).min().unwrap();
    top - low
}

/// Hops per dimension.
type Hops = [i64; 3];
/// (imbalance, −total hops) of a candidate group: smaller is better.
type Score = (i64, i64);

/// Groups `items` (each with a weight) into threes: the heaviest left with
/// the two that balance the group best. Items of equal weight are
/// interchangeable, so the search runs over weight classes.
fn group_in_threes<T: Copy>(items: Vec<([i64; 3], T)>, crit: [bool; 3]) -> Vec<T> {
    let mut classes: BTreeMap<[i64; 3], Vec<T>> = BTreeMap::new();
    for (w, it) in items {
        classes.entry(w).or_default().push(it);
    }
    for list in classes.values_mut() {
        list.reverse(); // pop() then yields them in the given order
    }
    let mut out = Vec::new();
    loop {
        let keys: Vec<[i64; 3]> = classes.keys().copied().collect();
        // The heaviest class: most hops in all, then the largest vector.
        let Some(&first) = keys.iter().max_by_key(|w| (w.iter().sum::<i64>(), **w)) else {
            break;
        };
        let take = |classes: &mut BTreeMap<[i64; 3], Vec<T>>, w: [i64; 3]| {
            let list = classes.get_mut(&w).unwrap();
            let it = list.pop().unwrap();
            if list.is_empty() {
                classes.remove(&w);
            }
            it
        };
        out.push(take(&mut classes, first));
        // The best partners: smallest (imbalance, −total hops), so heavy
        // items go early and light ones are kept to fill in later.
        let left: usize = classes.values().map(|l| l.len()).sum();
        let add = |a: [i64; 3], b: [i64; 3]| [a[0] + b[0], a[1] + b[1], a[2] + b[2]];
        let score = |s: [i64; 3]| (imbalance(s, crit), -s.iter().sum::<i64>());
        let keys: Vec<[i64; 3]> = classes.keys().copied().collect();
        // (score, partners' weight classes)
        let mut best: Option<(Score, Vec<Hops>)> = None;
        for (ia, &a) in keys.iter().enumerate() {
            let sa = add(first, a);
            if left == 1 {
                best = Some((score(sa), vec![a]));
                continue;
            }
            for &b in &keys[ia..] {
                if b == a && classes[&a].len() < 2 {
                    continue;
                }
                let sc = score(add(sa, b));
                if best.as_ref().is_none_or(|(bs, _)| sc < *bs) {
                    best = Some((sc, vec![a, b]));
                }
            }
        }
        for w in best.map(|b| b.1).unwrap_or_default() {
            out.push(take(&mut classes, w));
        }
    }
    out
}

/// Any torus: pairs v, −v grouped three at a time, then the half-ring nodes.
fn torus_greedy(n: [usize; 3]) -> Vec<Offset> {
    let mut done = vec![false; n[0] * n[1] * n[2]];
    done[0] = true;
    let mut pairs = Vec::new();
    for v in destinations(n) {
        if done[index(v, n)] || half_only(v, n) {
            continue;
        }
        done[index(v, n)] = true;
        done[index(neg(v), n)] = true;
        pairs.push((weight(v, n, true), v));
    }
    let mut out = Vec::with_capacity(n[0] * n[1] * n[2] - 1);
    for v in group_in_threes(pairs, critical(n)) {
        out.extend([v, neg(v)]);
    }
    let h = n.map(|x| if x % 2 == 0 { (x / 2) as i64 } else { 0 });
    let (q, t) = half_ring_sets(h);
    out.extend(q);
    out.extend(t);
    out
}

/// Any mesh: single sends grouped three at a time.
fn mesh_greedy(n: [usize; 3]) -> Vec<Offset> {
    let items = destinations(n)
        .into_iter()
        .map(|v| (weight(v, n, false), v))
        .collect();
    group_in_threes(items, critical(n))
}

#[cfg(test)]
mod tests {
    use super::{order, Wrap};
    use std::collections::HashSet;

    /// Every destination exactly once, with |c| < side, for every shape.
    #[test]
    fn covers_each_destination_once() {
        for a in 1..=8usize {
            for b in 1..=8usize {
                for c in 1..=8usize {
                    for wrap in [Wrap::Mesh, Wrap::Torus] {
                        let n = [a, b, c];
                        let o = order(n, wrap);
                        let mut seen = HashSet::new();
                        for v in &o {
                            let mut key = [0usize; 3];
                            for d in 0..3 {
                                assert!((v[d].unsigned_abs() as usize) < n[d], "{n:?} {v:?}");
                                key[d] = v[d].rem_euclid(n[d] as i64) as usize;
                            }
                            assert_ne!(key, [0; 3], "{n:?} {wrap:?}: self-send");
                            assert!(seen.insert(key), "{n:?} {wrap:?}: {v:?} twice");
                        }
                        assert_eq!(o.len(), a * b * c - 1, "{n:?} {wrap:?}");
                    }
                }
            }
        }
    }
}
