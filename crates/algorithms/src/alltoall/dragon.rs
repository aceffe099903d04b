//! Dragon routing (Noguchi, Take, Yokota: "All-to-all communication network
//! controlled by local intelligence"): in phase s = 0..P−1 rank v sends its
//! block to v XOR s. Phase 0 is the self-send, here the local copy of the own
//! block (it uses no link, so it does not hold phase 1 back). P must be a
//! power of two (the paper's binary n-cube).
//!
//! Phases are separated per rank: rank v starts phase s+1 only when its phase-s
//! send and receive are both complete (explicit dependencies; tag = s). This
//! is the paper's distributed control: every distributor/concentrator keeps a
//! local phase and advances it on the phase-switch tag that travels with the
//! packets, so phases stay in step without a global barrier. On a hypercube
//! with e-cube routing the transfers of one phase never share a directed link
//! (v and v XOR s cross bit b at node v with its lower bits of s flipped, a
//! different node for every v), so with one engine per node and phases in
//! step no two transfers share a link at any time. Rank-based: it runs on any
//! topology (the contention-freedom argument is the hypercube's).
//!
//! `dragon_net` is the schedule the Dragon net's nodes run: the same phases,
//! each rank's sends one after another in phase order, and no rank waits for
//! its receives; the network's distributed phase control keeps the phases
//! apart (`sim::packet`). Without it (the flow model, or a network that
//! does not hold phases) phases may overlap once ranks drift.

use super::{self_copy, stepped_exchange};
use crate::error::Result;
use crate::{Algorithm, Request};
use crate::{Applies, OpCount, RankNeed, RootNeed, TopologyNeed};
use topocoll_schedule::CollectiveKind;
use topocoll_schedule::{Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Alltoall,
    "dragon",
    "Dragon routing: phase s = 1..P-1 sends to rank XOR s, phases in step (P a power of two)",
    build,
)
.applies(Applies {
    topology: TopologyNeed::Any,
    ranks: RankNeed::PowerOfTwo(
        "phase s pairs rank v with v XOR s, which needs a power-of-two rank count, not {p}",
    ),
    root: RootNeed::Any,
})
.ops(OpCount::PerPair);

pub const DRAGON_NET: Algorithm = Algorithm::new(CollectiveKind::Alltoall, "dragon_net", "Dragon routing as the Dragon net's nodes run it: phase s = 1..P-1 sends to rank XOR s, one after another, no rank waiting for its receives", build_net).applies(Applies { topology: TopologyNeed::Any, ranks: RankNeed::PowerOfTwo("phase s pairs rank v with v XOR s, which needs a power-of-two rank count, not {p}"), root: RootNeed::Any }).ops(OpCount::PerPair);

fn power_of_two(req: &Request, alg: &Algorithm) -> Result<()> {
    let p = req.ranks;
    if !p.is_power_of_two() {
        return Err(req.unsupported(
            alg,
            format!(
                "phase s pairs rank v with v XOR s, which needs a power-of-two rank count, not {p}"
            ),
        ));
    }
    Ok(())
}

fn build(req: &Request) -> Result<Schedule> {
    power_of_two(req, &ALGORITHM)?;
    // Phases in step: phase s waits for the send and receive of phase s-1.
    Ok(stepped_exchange(req, &ALGORITHM, |v, phase| {
        (v ^ phase, v ^ phase)
    }))
}

fn build_net(req: &Request) -> Result<Schedule> {
    power_of_two(req, &DRAGON_NET)?;
    let mut s = req.schedule(&DRAGON_NET);
    let (p, b) = (req.ranks, req.count);
    for (v, prog) in s.programs.iter_mut().enumerate() {
        prog.ops.reserve(2 * p - 1);
        self_copy(prog, v, b);
        for phase in 1..p {
            let q = (v ^ phase) as u32;
            prog.push(
                Op::recv(q, phase as u32, Region::output(q as u64 * b, b)),
                &[],
            );
        }
        let mut prev: Vec<u32> = Vec::new();
        for phase in 1..p {
            let q = v ^ phase;
            prev = vec![prog.push(
                Op::send(q as u32, phase as u32, Region::input(q as u64 * b, b)),
                &prev,
            )];
        }
    }
    Ok(s)
}
