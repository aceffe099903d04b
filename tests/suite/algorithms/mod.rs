//! The algorithms: what each schedule is, beyond being correct; requests
//! they refuse.

use topocoll::algorithms::Error;
use topocoll::algorithms::{self, Request};
use topocoll::schedule::{Collective, Dtype, ReduceOp};
use topocoll::ScheduleKind;

mod alltoall;
mod alltoall_times;
mod nccl;
mod node_aware;
mod stream;
mod swing_bine;
mod trinaryx3;

#[test]
fn bad_requests_are_refused_with_their_kind() {
    let e = Request::new(
        Collective::Allreduce,
        4,
        12,
        Dtype::F64,
        ReduceOp::Sum,
        None,
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            Error::Base(topocoll_base::Error::Param { param: "size", .. })
        ),
        "{e:?}"
    );
    let e = Request::new(
        Collective::Bcast { root: 4 },
        4,
        8,
        Dtype::U8,
        ReduceOp::Sum,
        None,
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            Error::Schedule(topocoll::schedule::Error::Schedule {
                kind: ScheduleKind::Collective,
                ..
            })
        ),
        "{e:?}"
    );
    let e = Request::new(
        Collective::Alltoall,
        1 << 20,
        1 << 40,
        Dtype::U8,
        ReduceOp::Sum,
        None,
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            Error::Base(topocoll_base::Error::Param { param: "size", .. })
        ),
        "{e:?}"
    );
    let e = Request::new(Collective::Alltoall, 0, 8, Dtype::U8, ReduceOp::Sum, None).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Base(topocoll_base::Error::Param { param: "ranks", .. })
        ),
        "{e:?}"
    );
    assert!(algorithms::find_by_name("alltoall", "nope")
        .err()
        .unwrap()
        .to_string()
        .contains("one of: linear"));
    assert!(ReduceOp::parse("bxor", Dtype::F32).is_err());
}
