//! A [`Request`] built field by field.

use topocoll_algorithms::Request;
use topocoll_algorithms::Result;
use topocoll_schedule::{Collective, Dtype, ReduceOp};
use topocoll_topology::Topology;

/// A request of `collective` on `ranks` ranks: 1 KiB of f64 summed, on no
/// topology, until told otherwise.
pub fn request(collective: Collective, ranks: usize) -> RequestBuilder<'static> {
    RequestBuilder {
        collective,
        ranks,
        bytes: 1024,
        dtype: Dtype::F64,
        op: ReduceOp::Sum,
        topology: None,
        segment_bytes: None,
        radix: None,
    }
}

/// What [`request`] is building.
#[derive(Clone, Debug)]
pub struct RequestBuilder<'a> {
    collective: Collective,
    ranks: usize,
    bytes: u64,
    dtype: Dtype,
    op: ReduceOp,
    topology: Option<&'a Topology>,
    segment_bytes: Option<u64>,
    radix: Option<usize>,
}

impl<'a> RequestBuilder<'a> {
    /// The size as the command line's `--size` gives it.
    pub fn bytes(mut self, bytes: u64) -> Self {
        self.bytes = bytes;
        self
    }

    pub fn dtype(mut self, dtype: Dtype) -> Self {
        self.dtype = dtype;
        self
    }

    pub fn op(mut self, op: ReduceOp) -> Self {
        self.op = op;
        self
    }

    /// On a network.
    pub fn on<'b>(self, topology: &'b Topology) -> RequestBuilder<'b> {
        RequestBuilder {
            topology: Some(topology),
            ..self
        }
    }

    pub fn segment(mut self, bytes: u64) -> Self {
        self.segment_bytes = Some(bytes);
        self
    }

    pub fn radix(mut self, k: usize) -> Self {
        self.radix = Some(k);
        self
    }

    /// The request, or the error `Request::new` gives.
    pub fn try_build(self) -> Result<Request<'a>> {
        let mut req = Request::new(
            self.collective,
            self.ranks,
            self.bytes,
            self.dtype,
            self.op,
            self.topology,
        )?;
        req.segment_bytes = self.segment_bytes;
        req.radix = self.radix;
        Ok(req)
    }

    /// The request; a test's own mistake panics with the error.
    pub fn build(self) -> Request<'a> {
        let what = format!("{:?} on {} ranks", self.collective, self.ranks);
        self.try_build()
            .unwrap_or_else(|e| panic!("request {what}: {e}"))
    }
}
