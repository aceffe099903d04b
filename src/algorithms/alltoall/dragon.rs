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

use super::stepped_exchange;
use crate::algorithms::{Algorithm, Request};
use crate::error::Result;
use crate::schedule::Schedule;

pub const ALGORITHM: Algorithm = Algorithm {
    collective: "alltoall",
    name: "dragon",
    summary:
        "Dragon routing: phase s = 1..P-1 sends to rank XOR s, phases in step (P a power of two)",
    build,
    stream: None,
    segmented: false,
    lanes: false,
};

fn build(req: &Request) -> Result<Schedule> {
    let p = req.ranks;
    if !p.is_power_of_two() {
        return Err(req.unsupported(
            ALGORITHM.name,
            format!(
                "phase s pairs rank v with v XOR s, which needs a power-of-two rank count, not {p}"
            ),
        ));
    }
    // Phases in step: phase s waits for the send and receive of phase s-1.
    Ok(stepped_exchange(req, ALGORITHM.name, |v, phase| {
        (v ^ phase, v ^ phase)
    }))
}
