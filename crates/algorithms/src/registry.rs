//! What a registry entry declares about its algorithm beside its builders:
//! where it applies ([`Applies`]), how many operations its written-out
//! schedule has ([`OpCount`]) and its MPI libraries' counterparts
//! ([`Counterparts`]). [`Algorithm::check`] evaluates the declaration;
//! [`super::build`] runs it before the builder, so a request an algorithm does
//! not take is refused with the declaration's reason.

use super::{Algorithm, Request};
use crate::error::Result;
use topocoll_topology::Kind;

/// Where an algorithm applies: the network, the rank count and the root it
/// needs. A builder may refuse a request for reasons beyond these (a size,
/// a segment, a lane count); those are its own and stay in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Applies {
    pub topology: TopologyNeed,
    pub ranks: RankNeed,
    pub root: RootNeed,
}

impl Applies {
    /// Rank-based: any network (or none), any rank count, any root.
    pub const ANYWHERE: Applies = Applies {
        topology: TopologyNeed::Any,
        ranks: RankNeed::Any,
        root: RootNeed::Any,
    };

    /// A node-aware composition's: ranks placed on nodes as `need` says,
    /// any rank count, any root.
    pub const fn nodes(need: super::compose::NodeNeed) -> Applies {
        Applies {
            topology: TopologyNeed::Nodes(need),
            ranks: RankNeed::Any,
            root: RootNeed::Any,
        }
    }
}

/// The network an algorithm needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TopologyNeed {
    /// None: it runs on ranks alone, with or without a topology.
    Any,
    /// A mesh or torus of any dimension count, or Tofu's virtual 3D torus,
    /// with one rank per node.
    Grid,
    /// A mesh or torus (`mesh:`, `torus:`, or a grid file) whose routes
    /// follow signed offsets, one rank per node, with at most `max_dims`
    /// dimensions longer than 1.
    OffsetGrid { max_dims: usize },
    /// A grid (or Tofu's virtual torus) whose every dimension longer than 2
    /// wraps, one rank per node: the torus trees' network.
    Torus,
    /// A grid of sites (a topology file of kind "sites").
    Sites,
    /// Ranks placed several to a node (`--ranks-per-node`, `--map`), as
    /// the node-aware compositions need them (`compose::nodes`).
    Nodes(super::compose::NodeNeed),
}

/// The rank counts an algorithm takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RankNeed {
    Any,
    /// A power of two; the reason refused otherwise, with `{p}` for the
    /// rank count.
    PowerOfTwo(&'static str),
    /// An even count; the reason refused otherwise, with `{p}`.
    Even(&'static str),
}

/// The roots a rooted algorithm takes (unrooted collectives have none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RootNeed {
    Any,
    /// Rank 0 only.
    Zero,
}

/// How many operations an algorithm's written-out schedule has, counted
/// before it is built: a schedule over
/// [`super::pipelined::MAX_MATERIALISED_OPS`] is refused rather than written out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpCount {
    /// As many as its generator ([`Algorithm::stream`]) counts.
    Generated,
    /// At least a send and a receive for each ordered pair of ranks:
    /// 2·P·(P−1).
    PerPair,
    /// At least a send and a receive of each non-empty chunk (min(P,
    /// count) of them) at each of P − 1 ring steps: 2·(P−1)·min(P, count).
    PerChunkStep,
    /// Not counted before it is built (the verifier's memory check holds
    /// what is built).
    Unbounded,
}

/// An algorithm's exact counterparts in MPI libraries, for the tuning files
/// `tune` exports: the library's algorithm that sends the same messages
/// between the same ranks in the same dependency order as this one's
/// schedule (read from the library's source), so that the rule runs what
/// was simulated. A relative that runs something else (another tree over
/// the ranks, other sub-collectives, a throttled or reordered exchange) is
/// not a counterpart: the exports tune among the algorithms a library
/// runs, and docs/tuning.md's table (held to these fields by a test) says
/// which relatives were left out and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counterparts {
    /// Open MPI 4.1's coll/tuned algorithm for the collective.
    pub ompi: Option<Ompi>,
    /// MPICH 4.0's algorithm (its function name).
    pub mpich: Option<&'static str>,
}

impl Counterparts {
    /// No MPI library has it.
    pub const NONE: Counterparts = Counterparts {
        ompi: None,
        mpich: None,
    };
}

/// An Open MPI 4.1 coll/tuned algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ompi {
    /// Its number in a dynamic rules file.
    pub id: u32,
    /// Its name in coll/tuned's parameters.
    pub name: &'static str,
    /// The `ompi_coll_base_<collective>_intra_*` function that runs it.
    pub function: &'static str,
}

impl Algorithm {
    /// Whether the algorithm applies to `req` by its declaration
    /// ([`Algorithm::applies`]): `Error::Unsupported` with the reason when
    /// it does not.
    pub fn check(&self, req: &Request) -> Result<()> {
        self.check_topology(req)?;
        let p = req.ranks;
        let refuse = match self.applies.ranks {
            RankNeed::Any => None,
            RankNeed::PowerOfTwo(reason) => (!p.is_power_of_two()).then_some(reason),
            RankNeed::Even(reason) => (p % 2 == 1).then_some(reason),
        };
        if let Some(reason) = refuse {
            return Err(req.unsupported(self, reason.replace("{p}", &p.to_string())));
        }
        if let Some(k) = req.radix {
            if !self.radix {
                return Err(
                    req.unsupported(self, "it builds no k-nomial tree, so it takes no --radix")
                );
            }
            if k < 2 {
                return Err(topocoll_base::param!(
                    "radix",
                    " {k}: a k-nomial tree needs a radix of at least 2"
                ));
            }
        }
        if (req.channels.is_some() || req.protocol.is_some()) && !self.channels {
            return Err(req.unsupported(
                self,
                "it runs no NCCL channels, so it takes no --channels or --protocol",
            ));
        }
        if self.channels {
            super::nccl::channel_count(req)?;
        }
        if let Some(inter) = req.inter {
            if !self.takes_inter() {
                return Err(req.unsupported(
                    self,
                    "it is no node-aware composition, so it takes no --inter",
                ));
            }
            super::compose::check_inter(self.collective, inter)?;
        }
        if let (RootNeed::Zero, Some(root)) = (self.applies.root, req.collective.root()) {
            if root != 0 {
                return Err(req.unsupported(self, format!("it roots at rank 0 only, not {root}")));
            }
        }
        Ok(())
    }

    fn check_topology(&self, req: &Request) -> Result<()> {
        match self.applies.topology {
            TopologyNeed::Any => Ok(()),
            TopologyNeed::Grid => super::alltoall::grid_of(req, self).map(|_| ()),
            TopologyNeed::OffsetGrid { max_dims } => {
                let (topo, shape) = super::alltoall::grid_of(req, self)?;
                if !matches!(topo.kind, Kind::Grid(_)) {
                    return Err(req.unsupported(
                        self,
                        format!(
                            "needs a mesh or torus whose routes follow signed offsets, not {}",
                            topo.describe()
                        ),
                    ));
                }
                let big = shape.dims.iter().filter(|&&d| d > 1).count();
                if big > max_dims {
                    return Err(req.unsupported(
                        self,
                        format!(
                            "A2AT is defined on 2D and 3D grids; {:?} has {big} dimensions of size > 1",
                            shape.dims
                        ),
                    ));
                }
                Ok(())
            }
            TopologyNeed::Torus => {
                let torus_hint = "needs a torus topology (--topology torus:XxYxZ or tofu:XxYxZ)";
                let Some(topo) = req.topology else {
                    return Err(req.unsupported(self, torus_hint));
                };
                let Some(shape) = topo.grid_shape() else {
                    return Err(req.unsupported(self, format!("{}: {torus_hint}", topo.name)));
                };
                if shape.size() != req.ranks {
                    return Err(req.unsupported(
                        self,
                        format!("{} ranks on a grid of {}", req.ranks, shape.size()),
                    ));
                }
                super::trees::torus_axes(&shape)
                    .map(|_| ())
                    .map_err(|e| req.unsupported(self, e.to_string()))
            }
            TopologyNeed::Sites => super::lanes::sites(req, self).map(|_| ()),
            TopologyNeed::Nodes(need) => super::compose::nodes(req, self, need).map(|_| ()),
        }
    }

    /// The operations of its written-out schedule for `req`, as far as
    /// [`Algorithm::ops`] counts them (0 where it does not).
    pub fn op_count(&self, req: &Request) -> Result<u64> {
        Ok(match self.ops {
            OpCount::Generated => match self.stream {
                Some(stream) => stream(req)?.num_ops(),
                None => 0,
            },
            OpCount::PerPair => {
                let p = req.ranks as u64;
                2 * p * (p - 1)
            }
            OpCount::PerChunkStep => {
                let p = req.ranks as u64;
                2 * (p - 1) * p.min(req.count)
            }
            OpCount::Unbounded => 0,
        })
    }
}

#[cfg(test)]
mod tests;
