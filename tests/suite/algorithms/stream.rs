//! Generated schedules (the pipelines and the ring): which algorithms have
//! a generator. (That each is its written-out schedule op by op and
//! simulates to its bits: the corpus, tests/corpus/streams.toml; a source
//! whose counts and successors disagree: sim::sources.)

use topocoll::algorithms::{self, Request, ALGORITHMS};
use topocoll::schedule::{Collective, Dtype, ReduceOp};
use topocoll::topology::{parse_spec, Topology};

fn streamed_algorithms() -> impl Iterator<Item = &'static algorithms::Algorithm> {
    ALGORITHMS.iter().filter(|a| a.stream.is_some())
}

fn request<'a>(
    coll: &str,
    t: &'a Topology,
    count: u64,
    seg: Option<u64>,
    root: u32,
) -> Request<'a> {
    let c = Collective::parse(coll, root).unwrap();
    let mut req = Request::new(
        c,
        t.num_ranks(),
        count * 8,
        Dtype::F64,
        ReduceOp::Sum,
        Some(t),
    )
    .unwrap();
    req.segment_bytes = seg.map(|e| e * 8);
    req
}

#[test]
fn twelve_algorithms_have_a_generator_and_the_others_say_so() {
    let names: Vec<&str> = streamed_algorithms().map(|a| a.name).collect();
    assert_eq!(streamed_algorithms().count(), 12, "{names:?}");
    let t = parse_spec("torus:4x4").unwrap();
    let req = request("alltoall", &t, 4, None, 0);
    let err = topocoll::algorithms::build_stream(
        &topocoll::algorithms::alltoall::linear::ALGORITHM,
        &req,
    )
    .err()
    .unwrap()
    .to_string();
    assert!(err.contains("has no generator"), "{err}");
}
