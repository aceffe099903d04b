//! The `orders` check: a tiny sequential interpreter runs a schedule on
//! real f64 data, taking one ready op at a time in several orders (first
//! in first out, last in first out, random); the results must not depend
//! on the order. A reduce or allreduce gives the same bits under every
//! order (and on every rank of an allreduce), close to the exact sum; a
//! bcast gives every rank the root's bits.

use std::collections::{HashMap, VecDeque};
use topocoll::algorithms;
use topocoll::schedule::{Buf, Collective, Op, ReduceOp, Region, Schedule};
use topocoll_testkit::splitmix;

/// Runs the check on a point's schedule (its elements as f64): a bcast, or
/// a reduce or allreduce with sum; false for any other.
pub(super) fn check(s: &Schedule, what: &str) -> bool {
    match s.collective {
        Collective::Bcast { root } => broadcast_copies_the_roots_bits(s, root, what),
        Collective::Reduce { .. } | Collective::Allreduce if s.op == ReduceOp::Sum => {
            check_deterministic(s, what)
        }
        _ => return false,
    }
    true
}

/// Every rank's output is the root's input, bit for bit, under every order.
fn broadcast_copies_the_roots_bits(s: &Schedule, root: u32, what: &str) {
    for policy in POLICIES {
        let out = run_floats(s, policy);
        let want: Vec<u64> = (0..s.count)
            .map(|i| datum(root as usize, i).to_bits())
            .collect();
        for (r, o) in out.iter().enumerate() {
            assert_eq!(bits(o), want, "{what}: rank {r} (policy {policy:?})");
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Policy {
    Fifo,
    Lifo,
    Random(u64),
}

/// Rank r's element i: a random mantissa scaled by 10^-6 .. 10^6, so sums
/// depend on the order of the additions.
fn datum(r: usize, i: u64) -> f64 {
    let h = splitmix((r as u64) << 32 | i);
    let mant = (h >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
    mant * 10f64.powi((h % 13) as i32 - 6)
}

/// Runs the schedule on real data, taking one ready op at a time in the order
/// `policy` picks; sends are eager, receives match (src, dst, tag) in FIFO
/// order. Returns every rank's Output.
fn run_floats(s: &Schedule, policy: Policy) -> Vec<Vec<f64>> {
    assert_eq!(s.op, ReduceOp::Sum);
    let p = s.ranks;
    let mut bufs: Vec<[Vec<f64>; 3]> = (0..p)
        .map(|r| {
            [Buf::Input, Buf::Output, Buf::Scratch]
                .map(|b| vec![f64::NAN; s.buffer_len(r, b) as usize])
        })
        .collect();
    for (r, b) in bufs.iter_mut().enumerate() {
        if let Some((buf, len)) = s.initial(r) {
            for i in 0..len {
                b[buf as usize][i as usize] = datum(r, i);
            }
        }
    }
    let mut remaining: Vec<Vec<usize>> = s
        .programs
        .iter()
        .map(|pr| (0..pr.len()).map(|i| pr.deps(i).len()).collect())
        .collect();
    let mut succ: Vec<Vec<Vec<usize>>> = s
        .programs
        .iter()
        .map(|pr| {
            let mut v = vec![Vec::new(); pr.len()];
            for i in 0..pr.len() {
                for &d in pr.deps(i) {
                    v[d as usize].push(i);
                }
            }
            v
        })
        .collect();
    let mut ready: VecDeque<(usize, usize)> = VecDeque::new();
    for (r, rem) in remaining.iter().enumerate() {
        for (i, &n) in rem.iter().enumerate() {
            if n == 0 {
                ready.push_back((r, i));
            }
        }
    }
    let mut messages: HashMap<(u32, u32, u32), VecDeque<Vec<f64>>> = HashMap::new();
    let mut waiting: HashMap<(u32, u32, u32), VecDeque<usize>> = HashMap::new();
    let mut rng = 0u64;
    let read = |bufs: &Vec<[Vec<f64>; 3]>, r: usize, reg: &Region| -> Vec<f64> {
        let b = &bufs[r][reg.buf as usize];
        b[reg.offset as usize..reg.end() as usize].to_vec()
    };
    fn write(dst: &mut [f64], data: &[f64], combine: bool) {
        for (d, &x) in dst.iter_mut().zip(data) {
            *d = if combine { *d + x } else { x };
        }
    }
    let mut done = 0;
    let total = s.num_ops();
    let mut complete = |r: usize, i: usize, ready: &mut VecDeque<(usize, usize)>| {
        done += 1;
        for &j in &std::mem::take(&mut succ[r][i]) {
            remaining[r][j] -= 1;
            if remaining[r][j] == 0 {
                ready.push_back((r, j));
            }
        }
    };
    loop {
        let next = match policy {
            Policy::Fifo => ready.pop_front(),
            Policy::Lifo => ready.pop_back(),
            Policy::Random(seed) => {
                if ready.is_empty() {
                    None
                } else {
                    rng = splitmix(rng ^ seed);
                    let k = (rng % ready.len() as u64) as usize;
                    ready.swap_remove_back(k)
                }
            }
        };
        let Some((r, i)) = next else { break };
        match s.programs[r].ops[i] {
            Op::Send {
                peer, tag, region, ..
            } => {
                let data = read(&bufs, r, &region);
                let key = (r as u32, peer, tag);
                if let Some(j) = waiting.get_mut(&key).and_then(|q| q.pop_front()) {
                    let Op::Recv {
                        region: dst,
                        combine,
                        ..
                    } = s.programs[peer as usize].ops[j]
                    else {
                        unreachable!()
                    };
                    let b = &mut bufs[peer as usize][dst.buf as usize];
                    write(
                        &mut b[dst.offset as usize..dst.end() as usize],
                        &data,
                        combine,
                    );
                    complete(peer as usize, j, &mut ready);
                } else {
                    messages.entry(key).or_default().push_back(data);
                }
                complete(r, i, &mut ready);
            }
            Op::Recv {
                peer,
                tag,
                region,
                combine,
            } => {
                let key = (peer, r as u32, tag);
                if let Some(data) = messages.get_mut(&key).and_then(|q| q.pop_front()) {
                    let b = &mut bufs[r][region.buf as usize];
                    write(
                        &mut b[region.offset as usize..region.end() as usize],
                        &data,
                        combine,
                    );
                    complete(r, i, &mut ready);
                } else {
                    waiting.entry(key).or_default().push_back(i);
                }
            }
            Op::Copy { src, dst } | Op::Combine { src, dst } => {
                let data = read(&bufs, r, &src);
                let combine = matches!(s.programs[r].ops[i], Op::Combine { .. });
                let b = &mut bufs[r][dst.buf as usize];
                write(
                    &mut b[dst.offset as usize..dst.end() as usize],
                    &data,
                    combine,
                );
                complete(r, i, &mut ready);
            }
            Op::Compute { .. } => complete(r, i, &mut ready),
        }
    }
    assert_eq!(done, total, "{}: the interpreter deadlocked", s.algorithm);
    bufs.into_iter().map(|[_, out, _]| out).collect()
}

const POLICIES: [Policy; 4] = [
    Policy::Fifo,
    Policy::Lifo,
    Policy::Random(1),
    Policy::Random(0xdead_beef),
];

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Runs a reduction under every policy: the constrained outputs must agree
/// bit for bit across policies (and across ranks for allreduce) and be close to
/// the exact sum.
fn check_deterministic(s: &Schedule, what: &str) {
    let p = s.ranks;
    let n = s.count;
    let exact: Vec<f64> = (0..n)
        .map(|i| {
            // Order-independent reference: sum sorted by magnitude.
            let mut xs: Vec<f64> = (0..p).map(|r| datum(r, i)).collect();
            xs.sort_by(|a, b| a.abs().total_cmp(&b.abs()));
            xs.iter().sum()
        })
        .collect();
    let scale: Vec<f64> = (0..n)
        .map(|i| (0..p).map(|r| datum(r, i).abs()).sum())
        .collect();
    let holders: Vec<usize> = match s.collective {
        Collective::Reduce { root } => vec![root as usize],
        _ => (0..p).collect(),
    };
    // An allreduce whose ranks reduce in different orders
    // (`Algorithm::ranks_differ`) is held to the same bits under every
    // order rank by rank; every other to the same bits on every rank.
    let agree =
        algorithms::find(s.collective.kind(), &s.algorithm).map_or(true, |a| a.ranks_agree());
    let mut references: Vec<Option<Vec<u64>>> = vec![None; p];
    for policy in POLICIES {
        let out = run_floats(s, policy);
        for &r in &holders {
            let b = bits(&out[r]);
            let reference = &mut references[if agree { 0 } else { r }];
            match reference {
                None => {
                    for i in 0..n as usize {
                        assert!(
                            (out[r][i] - exact[i]).abs() <= 1e-12 * scale[i],
                            "{what}: rank {r} element {i}: {} vs {}",
                            out[r][i],
                            exact[i]
                        );
                    }
                    *reference = Some(b)
                }
                Some(want) => {
                    assert_eq!(&b, &*want, "{what}: rank {r} differs (policy {policy:?})")
                }
            }
        }
    }
}

#[test]
fn the_data_makes_sums_order_dependent() {
    let p = 27;
    let differs = (0..100u64).any(|i| {
        let fwd: f64 = (0..p).map(|r| datum(r, i)).sum();
        let bwd: f64 = (0..p).rev().map(|r| datum(r, i)).sum();
        fwd.to_bits() != bwd.to_bits()
    });
    assert!(differs);
}
