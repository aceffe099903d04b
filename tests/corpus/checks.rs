//! The corpus's checks but the drivers' ([`super::drivers`]) and the op
//! orders' ([`super::orders`]): the verifier's formats, the threads
//! backend, generators, and the collective's bound.

use super::{Point, Tally};
use std::time::{Duration, Instant};
use topocoll::algorithms::{self, Algorithm, Request};
use topocoll::lookahead::Lookahead;
use topocoll::model::schedule_collective_bound;
use topocoll::runtime::{self, threads, Elem, Fault, Options, Plan, RankBuffers};
use topocoll::schedule::{
    self, from_msccl_xml, to_msccl_xml, Materialised, MscclExport, MscclImport, OpKind, OpSource,
    Schedule,
};
use topocoll::sim::{simulate, simulate_source, SimConfig, SimResult};
use topocoll::topology::Topology;
use topocoll::with_dtype;

/// to_json → from_json is the same schedule (and, unless the case verifies
/// the original, the one read back verifies).
pub(super) fn json(s: &Schedule, verify: bool, what: &str) {
    let mut buf = Vec::new();
    schedule::to_json(s, &mut buf).unwrap();
    let back = schedule::from_json(std::str::from_utf8(&buf).unwrap())
        .unwrap_or_else(|e| panic!("{what}: JSON read back: {e}"));
    assert!(back == *s, "{what}: JSON read back differs");
    if verify {
        schedule::verify(&back).unwrap_or_else(|e| panic!("{what}: JSON read back: {e}"));
    }
}

fn export(s: &Schedule) -> topocoll::Result<(String, MscclExport)> {
    let mut out = Vec::new();
    let report = to_msccl_xml(s, &mut out)?;
    Ok((String::from_utf8(out).unwrap(), report))
}

/// Written out as MSCCL XML and read back, the schedule verifies; where
/// nothing was lost (no wait added by a threadblock's order, no route, no
/// compute step) writing it again gives the same text, and the schedule
/// read back is returned to be simulated beside the original. A schedule
/// the format cannot hold (a collective MSCCL has no form for, unequal
/// reduce-scatter parts, a send to oneself, more channels than MSCCL's) is
/// counted and left.
pub(super) fn msccl_round_trip(
    s: &Schedule,
    tally: &mut Tally,
    what: &str,
) -> Option<(Schedule, String)> {
    let (text, lost) = match export(s) {
        Ok(x) => x,
        Err(e) if e.to_string().starts_with("MSCCL XML") => {
            tally.add("msccl_no_form");
            return None;
        }
        Err(e) => panic!("{what}: MSCCL XML: {e}"),
    };
    let how = MscclImport {
        count: Some(s.count),
        dtype: s.dtype,
        op: s.op,
    };
    let back = from_msccl_xml(&text, &how).unwrap_or_else(|e| panic!("{what}: MSCCL XML: {e}"));
    schedule::verify(&back).unwrap_or_else(|e| panic!("{what}: MSCCL XML read back: {e}"));
    if lost == MscclExport::default() {
        tally.add("msccl_same");
        assert_eq!(export(&back).unwrap().0, text, "{what}: MSCCL XML again");
        Some((back, text))
    } else {
        tally.add("msccl_with_waits");
        assert_eq!(lost.lost_compute, 0, "{what}");
        None
    }
}

fn without_wall(mut r: SimResult) -> SimResult {
    r.run.wall_s = 0.0;
    r
}

/// The schedule read back from MSCCL XML simulates to the original's bits.
pub(super) fn msccl_simulates_alike(
    s: &Schedule,
    back: &Schedule,
    topo: &Topology,
    cfg: &SimConfig,
    what: &str,
) {
    assert_eq!(
        without_wall(simulate(s, topo, cfg).unwrap()),
        without_wall(simulate(back, topo, cfg).unwrap()),
        "{what}: MSCCL XML read back"
    );
}

fn run_and_check<T: Elem>(
    s: &Schedule,
    plan: &Plan,
    opts: &Options,
    what: &str,
) -> Vec<RankBuffers<T>> {
    let mut bufs: Vec<RankBuffers<T>> = (0..s.ranks)
        .map(|r| runtime::initial_buffers(s, r))
        .collect();
    threads::run(plan, &mut bufs, opts).unwrap_or_else(|e| panic!("{what}: {e}"));
    runtime::check(s, &bufs).unwrap_or_else(|e| panic!("{what}: {e}"));
    bufs
}

/// The threads backend on each of the case's runs: every rank's buffers
/// equal the sequential reference's and the collective's definition; the
/// same output bits on every run, and a replay, where the case asks.
pub(super) fn threads(point: &Point, s: &Schedule) {
    let how = point.case.threads.as_ref().unwrap();
    let plan = Plan::new(s).unwrap_or_else(|e| panic!("{}: {e}", point.what));
    if how.replays {
        // None needs a send buffered before its receive is posted.
        assert!(plan.replay().is_some(), "{}: no replay", point.what);
    }
    let mut first: Option<Vec<Vec<u64>>> = None;
    for run in &how.runs {
        let engines = run.engines[(s.ranks + point.dtype_index) % run.engines.len()];
        let opts = Options {
            workers: run.workers,
            engines,
            timeout: Some(Duration::from_secs(60)),
            ..Options::default()
        };
        let what = format!("{}, {} workers, {engines} engines", point.what, run.workers);
        let bits: Vec<Vec<u64>> = with_dtype!(s.dtype, T => {
            run_and_check::<T>(s, &plan, &opts, &what)
                .iter()
                .map(|b| b.output.iter().map(|x| x.bits()).collect())
                .collect()
        });
        if !how.same_bits {
            continue;
        }
        match &first {
            None => first = Some(bits),
            Some(want) => assert!(bits == *want, "{what}: other bits than the first run"),
        }
    }
}

/// Rank 3 (mod P) fails half way through its program: every rank stops,
/// with an error naming it, well before the timeout. False where that rank
/// has no op.
pub(super) fn fault(s: &Schedule, what: &str) -> bool {
    let p = s.ranks;
    let rank = 3 % p;
    let nops = s.programs[rank].len();
    if nops == 0 {
        return false;
    }
    let op = nops / 2;
    let timeout = Duration::from_secs(10);
    let plan = Plan::new(s).unwrap();
    let opts = Options {
        engines: 2,
        fault: Some(Fault { rank, op }),
        timeout: Some(timeout),
        ..Options::default()
    };
    let t0 = Instant::now();
    let err = with_dtype!(s.dtype, T => {
        let mut bufs: Vec<RankBuffers<T>> = (0..p).map(|r| runtime::initial_buffers(s, r)).collect();
        threads::run(&plan, &mut bufs, &opts).unwrap_err().to_string()
    });
    assert!(t0.elapsed() < timeout, "{what}: {err}");
    assert!(
        err.contains(&format!("rank {rank} failed at op {op}")),
        "{what}: {err}"
    );
    assert!(
        err.contains(&format!("all {p} ranks stopped")),
        "{what}: {err}"
    );
    true
}

/// The algorithm's generator is its written-out schedule, op by op: in
/// runs from every start, long enough to cross rounds and reach the last,
/// partial one; the gated sends are the short ones.
pub(super) fn stream_ops(point: &Point, s: &Schedule) {
    let what = &point.what;
    let st = algorithms::build_stream(point.alg, &point.req).unwrap();
    let m = Materialised::new(s).unwrap();
    assert_eq!(st.num_ops(), s.num_ops() as u64, "{what}");
    assert_eq!(st.farthest_peer(), m.farthest_peer(), "{what}");
    for r in 0..s.ranks {
        assert_eq!(st.len(r), m.len(r), "{what}: rank {r}");
        assert_eq!(
            st.header().programs[r].scratch,
            s.programs[r].scratch,
            "{what}: rank {r}"
        );
        let ungated = st.min_ungated_send_count().unwrap_or(u64::MAX);
        assert!(ungated >= st.min_send_count().unwrap_or(u64::MAX), "{what}");
        let mut named = Vec::new();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        st.initial(r, &mut a);
        m.initial(r, &mut b);
        assert_eq!(a, b, "{what}: rank {r} initial ops");
        // In runs from every start, long enough to cross
        // rounds and reach the last, partial one.
        let n = m.len(r) as u32;
        let deps: Vec<u32> = (0..n).map(|i| m.dep_count(r, i)).collect();
        for from in 0..n {
            let to = if from % 16 == 0 { n } else { n.min(from + 50) };
            let mut got = Vec::new();
            st.dep_counts(r, from..to, |d| got.push(d));
            assert_eq!(
                got,
                deps[from as usize..to as usize],
                "{what}: rank {r} deps of ops {from}..{to}"
            );
        }
        for i in 0..n {
            assert_eq!(st.op(r, i), m.op(r, i), "{what}: rank {r} op {i}");
            assert_eq!(
                st.dep_count(r, i),
                m.dep_count(r, i),
                "{what}: rank {r} op {i}"
            );
            let (mut a, mut b) = (Vec::new(), Vec::new());
            st.successors(r, i, |j| a.push(j));
            m.successors(r, i, |j| b.push(j));
            assert_eq!(a, b, "{what}: rank {r} op {i} successors");
            let send = matches!(m.op(r, i), topocoll::schedule::Op::Send { .. });
            if let Some(j) = st.far_successor(r, i).filter(|_| send) {
                assert!(a.contains(&j), "{what}: rank {r} op {i} far successor {j}");
            }
            assert_eq!(st.kind(r, i), m.kind(r, i), "{what}: rank {r} op {i} kind");
            assert_eq!(
                st.combines(r, i),
                m.combines(r, i),
                "{what}: rank {r} op {i} combines"
            );
            if send {
                assert_eq!(
                    st.partner(r, i),
                    m.partner(r, i),
                    "{what}: rank {r} op {i} partner"
                );
                // The written-out schedule names no gated sends.
                let (t, gates) = st.gated_transfer(r, i);
                assert_eq!(t, st.transfer(r, i), "{what}: rank {r} op {i}");
                assert_eq!(t, m.transfer(r, i), "{what}: rank {r} op {i} transfer");
                assert_eq!(m.gated_transfer(r, i).1, None, "{what}");
                if let Some(j) = gates {
                    // A send that waits for this one, shorter
                    // than every send not gated, where this one
                    // is not.
                    let (gated, gates_next) = st.gated_transfer(r, j);
                    assert!(a.contains(&j), "{what}: rank {r} op {i} gates {j}");
                    assert!(gated.count < ungated && t.count >= ungated, "{what}");
                    assert!(gates_next.is_none(), "{what}: rank {r} op {j}");
                    named.push(j);
                }
            }
        }
        // Every shorter send is gated by one.
        for i in 0..n {
            if st.kind(r, i) == OpKind::Send {
                let t = st.transfer(r, i);
                if t.peer as usize != r && t.count < ungated {
                    assert!(named.contains(&i), "{what}: rank {r} op {i} not gated");
                }
            }
        }
    }
}

/// The generator and the written-out schedule simulate to the same bits.
pub(super) fn stream_simulates_alike(
    alg: &Algorithm,
    req: &Request,
    s: &Schedule,
    topo: &Topology,
    cfg: &SimConfig,
    what: &str,
) {
    let st = algorithms::build_stream(alg, req).unwrap();
    let a = simulate(s, topo, cfg).unwrap();
    let b = simulate_source(&st, topo, cfg).unwrap();
    assert_eq!(
        a.time_s.to_bits(),
        b.time_s.to_bits(),
        "{what}: {} vs {}",
        a.time_s,
        b.time_s
    );
    assert_eq!(a.rank_finish_s, b.rank_finish_s, "{what}");
    assert_eq!(a.flows, b.flows, "{what}");
    assert_eq!(a.run.events, b.run.events, "{what}");
    assert_eq!(a.links_shared_fraction, b.links_shared_fraction, "{what}");
}

/// The simulated time (every driver allowed) is never below the
/// collective's lower bound (`model::collective_bound`, the same for
/// every algorithm), which is above zero wherever bytes must move; every
/// rank finishes.
pub(super) fn bounds(
    s: &Schedule,
    topo: &Topology,
    model: &super::Model,
    cfg: &SimConfig,
    what: &str,
) {
    let r = simulate(s, topo, cfg).unwrap();
    assert_eq!(r.rank_finish_s.len(), s.ranks, "{what}");
    let lb =
        schedule_collective_bound(s, topo, model.injection_bandwidth, model.ejection_bandwidth)
            .unwrap();
    if s.ranks > 1 && s.count > 0 {
        assert!(lb > 0.0, "{what}: bound {lb}");
    }
    assert!(
        r.time_s >= lb * (1.0 - 1e-9),
        "{what}: time {} below the bound {lb}",
        r.time_s
    );
}
