//! Which algorithm serves each collective of a workload: the user's choice
//! per collective (`allreduce=rabenseifner,bcast=binomial`), SimGrid's
//! `smpi/<collective>:<name>` options mapped onto topocoll's algorithms, or
//! the default of each.

use crate::error::fail;
use crate::error::Result;
use std::sync::Arc;
use topocoll_algorithms::{self as algorithms, Algorithm};
use topocoll_base::did_you_mean;
use topocoll_schedule::{Collective, CollectiveKind};

/// How a collective's schedule sends its large messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sends {
    /// As the schedule says: every send whose inputs are ready goes (the
    /// node's engines permitting). topocoll's own algorithms.
    AsScheduled,
    /// As SMPI's implementation of the same algorithm sends them: with
    /// blocking calls, so a rank's sends of at least the eager limit go one
    /// after another, each when the one before has arrived (smaller ones go
    /// at once).
    Blocking,
    /// Its large sends as [`Sends::Blocking`] sends them, its receives
    /// posted as the schedule says: SMPI's default allreduce, whose reduce
    /// posts every receive at once and whose bcast sends with blocking
    /// calls.
    BlockingSends,
}

/// An algorithm for each collective, and how it sends (none chosen: each
/// collective's default), or `auto` for some: the algorithm [`Auto`]
/// picks for each call's size.
#[derive(Clone, Debug, Default)]
pub struct Choice {
    chosen: [Option<(&'static Algorithm, Sends)>; 13],
    auto: [bool; 13],
    picker: Option<Auto>,
}

/// What serves the collectives chosen as `auto`: the algorithm, and its
/// pipeline segment when it pipelines, for a call of the world's ranks by
/// its collective and bytes (the caller's tune table for this network; the
/// workload layer knows nothing of tuning).
#[derive(Clone)]
pub struct Auto(pub Arc<AutoFn>);

/// [`Auto`]'s function.
pub type AutoFn = dyn Fn(Collective, u64) -> Result<Picked> + Send + Sync;

/// An algorithm and the pipeline segment it runs with (none: its own).
#[derive(Clone, Copy, Debug)]
pub struct Picked {
    pub algorithm: &'static Algorithm,
    pub segment_bytes: Option<u64>,
}

/// How one call is served.
#[derive(Clone, Copy, Debug)]
pub struct Served {
    pub picked: Picked,
    pub sends: Sends,
}

impl std::fmt::Debug for Auto {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Auto(..)")
    }
}

/// One of `--compare`'s alternatives.
#[derive(Clone, Copy, Debug)]
pub enum Alternative {
    Algorithm(&'static Algorithm),
    /// The tune table's choice at each call's size.
    Auto,
}

impl Alternative {
    pub fn is_auto(&self) -> bool {
        matches!(self, Alternative::Auto)
    }

    pub fn name(&self) -> &'static str {
        match self {
            Alternative::Algorithm(a) => a.name,
            Alternative::Auto => "auto",
        }
    }
}

/// Each collective's algorithm when none is chosen: SMPI's default where
/// topocoll has it (the binomial bcast, the linear barrier, reduce and
/// allgather, the linear reduce then binomial bcast of the allreduce, the
/// linear reduce then scatterv of the reduce_scatter, the direct scan and
/// exscan; the alltoall's is chosen by size, [`smpi_default_alltoall`]),
/// otherwise a plain rank-based one that takes any rank count.
const DEFAULTS: [(&Algorithm, Sends); 13] = [
    (&algorithms::alltoall::linear::ALGORITHM, Sends::AsScheduled),
    (
        &algorithms::allgather::linear::ALGORITHM,
        Sends::AsScheduled,
    ),
    (&algorithms::bcast::binomial::ALGORITHM, Sends::Blocking),
    (&algorithms::reduce::linear::ALGORITHM, Sends::AsScheduled),
    (
        &algorithms::allreduce::linear_reduce_bcast::ALGORITHM,
        Sends::BlockingSends,
    ),
    (
        &algorithms::reduce_scatter::reduce_scatterv::ALGORITHM,
        Sends::AsScheduled,
    ),
    (&algorithms::scatter::linear::ALGORITHM, Sends::AsScheduled),
    (&algorithms::gather::linear::ALGORITHM, Sends::AsScheduled),
    (&algorithms::barrier::linear::ALGORITHM, Sends::AsScheduled),
    (&algorithms::scan::direct::ALGORITHM, Sends::AsScheduled),
    (&algorithms::exscan::direct::ALGORITHM, Sends::AsScheduled),
    (
        &algorithms::alltoallv::linear::ALGORITHM,
        Sends::AsScheduled,
    ),
    (
        &algorithms::allgatherv::linear::ALGORITHM,
        Sends::AsScheduled,
    ),
];

/// SimGrid's algorithm names (`--cfg=smpi/<collective>:<name>`) that are the
/// same algorithm as one of topocoll's, by collective, with how SMPI's
/// implementation sends (blocking sends and send-receives; `basic_linear`
/// posts every message at once). Each replays to SimGrid's time on
/// SimGrid's platforms (`crates/workload/tests/simgrid.rs`); SMPI's other
/// names are refused rather than approximated. `lr` starts, in SMPI, with a
/// send-receive of one block to itself, which a platform whose hosts have
/// a loopback link of their own charges for, and SMPI's `bruck` does its
/// rotations as P + 4 such send-receives where topocoll copies
/// (docs/workloads.md).
pub const SIMGRID_NAMES: [(&str, &Algorithm, Sends); 16] = [
    (
        "pair",
        &algorithms::alltoall::pairwise::ALGORITHM,
        Sends::Blocking,
    ),
    (
        "bruck",
        &algorithms::alltoall::bruck::ALGORITHM,
        Sends::Blocking,
    ),
    (
        "basic_linear",
        &algorithms::alltoall::linear::ALGORITHM,
        Sends::AsScheduled,
    ),
    (
        "lr",
        &algorithms::allreduce::ring::ALGORITHM,
        Sends::Blocking,
    ),
    (
        "rdb",
        &algorithms::allreduce::recursive_doubling::ALGORITHM,
        Sends::Blocking,
    ),
    (
        "binomial_tree",
        &algorithms::bcast::binomial::ALGORITHM,
        Sends::Blocking,
    ),
    (
        "binomial",
        &algorithms::reduce::binomial::ALGORITHM,
        Sends::Blocking,
    ),
    (
        "ompi_basic_linear",
        &algorithms::alltoallv::linear::ALGORITHM,
        Sends::AsScheduled,
    ),
    (
        "ompi_basic_linear",
        &algorithms::barrier::linear::ALGORITHM,
        Sends::AsScheduled,
    ),
    (
        "ring",
        &algorithms::alltoall::ring::ALGORITHM,
        Sends::AsScheduled,
    ),
    (
        "rab_rdb",
        &algorithms::allreduce::rabenseifner::ALGORITHM,
        Sends::AsScheduled,
    ),
    (
        "ring",
        &algorithms::allgather::ring::ALGORITHM,
        Sends::AsScheduled,
    ),
    (
        "bruck",
        &algorithms::allgather::bruck::ALGORITHM,
        Sends::AsScheduled,
    ),
    (
        "ompi_neighborexchange",
        &algorithms::allgather::neighbor::ALGORITHM,
        Sends::AsScheduled,
    ),
    (
        "ompi_bruck",
        &algorithms::barrier::dissemination::ALGORITHM,
        Sends::AsScheduled,
    ),
    (
        "ompi_ring",
        &algorithms::reduce_scatter::ring::ALGORITHM,
        Sends::AsScheduled,
    ),
];

impl Choice {
    /// `COLLECTIVE=ALGORITHM,...`, each a registered algorithm of its
    /// collective.
    pub fn parse(list: &str) -> Result<Choice> {
        let mut c = Choice::default();
        for item in list.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let Some((coll, alg)) = item.split_once('=') else {
                return Err(fail!(Workload, Choice,
                    "--algorithm: '{item}' is not COLLECTIVE=ALGORITHM (allreduce=ring,bcast=binomial)"
                ));
            };
            let kind = CollectiveKind::parse(coll.trim())?;
            match alg.trim() {
                "auto" => c.set_auto(kind),
                name => c.set(kind, algorithms::find(kind, name)?, Sends::AsScheduled),
            }
        }
        Ok(c)
    }

    /// `COLLECTIVE=A,B,...` (`--compare`): one collective and the
    /// algorithms to price the workload under, each in turn.
    pub fn alternatives(text: &str) -> Result<(CollectiveKind, Vec<Alternative>)> {
        let Some((coll, list)) = text.split_once('=') else {
            return Err(fail!(Workload, Choice,
                "--compare: '{text}' is not COLLECTIVE=ALGORITHM,ALGORITHM,... (allreduce=ring,rabenseifner)"
            ));
        };
        let kind = CollectiveKind::parse(coll.trim())?;
        let algs = list
            .split(',')
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .map(|a| match a {
                "auto" => Ok(Alternative::Auto),
                name => algorithms::find(kind, name).map(Alternative::Algorithm),
            })
            .collect::<Result<Vec<_>, algorithms::Error>>()?;
        if algs.is_empty() {
            return Err(fail!(
                Workload,
                Choice,
                "--compare: {} names no algorithm",
                kind.name()
            ));
        }
        Ok((kind, algs))
    }

    /// Sets the algorithm of `kind` and how it sends.
    pub fn set(&mut self, kind: CollectiveKind, alg: &'static Algorithm, sends: Sends) {
        self.chosen[kind as usize] = Some((alg, sends));
        self.auto[kind as usize] = false;
    }

    /// `kind` is served by the [`Auto`] given with [`Choice::with_auto`].
    pub fn set_auto(&mut self, kind: CollectiveKind) {
        self.chosen[kind as usize] = None;
        self.auto[kind as usize] = true;
    }

    /// Sets `alternative` for `kind`, as `--compare` prices it.
    pub fn set_alternative(&mut self, kind: CollectiveKind, alternative: Alternative) {
        match alternative {
            Alternative::Algorithm(a) => self.set(kind, a, Sends::AsScheduled),
            Alternative::Auto => self.set_auto(kind),
        }
    }

    /// Whether some collective is `auto`.
    pub fn has_auto(&self) -> bool {
        self.auto.contains(&true)
    }

    /// This choice with `picker` serving its `auto` collectives.
    pub fn with_auto(mut self, picker: Auto) -> Choice {
        self.picker = Some(picker);
        self
    }

    /// Takes SimGrid's option `smpi/<collective>:<name>` (`key` is
    /// `smpi/<collective>`): `default` is the default here too, and any other
    /// name must be one that [`SIMGRID_NAMES`] maps.
    pub fn simgrid(&mut self, key: &str, name: &str) -> Result<()> {
        let coll = key.strip_prefix("smpi/").unwrap_or(key);
        let kind = match coll {
            "reduce_scatter" => CollectiveKind::ReduceScatter,
            other => CollectiveKind::parse(other)?,
        };
        if name == "default" {
            self.chosen[kind as usize] = None;
            return Ok(());
        }
        let known: Vec<&str> = SIMGRID_NAMES
            .iter()
            .filter(|t| t.1.collective == kind)
            .map(|t| t.0)
            .collect();
        match simgrid_name(kind, name) {
            Some((alg, sends)) => {
                self.set(kind, alg, sends);
                Ok(())
            }
            None => Err(fail!(Workload, Choice,
                "--cfg={key}:{name}: SimGrid's {name} is not mapped onto a topocoll algorithm{} (mapped: default, {})",
                did_you_mean(name, known.iter().copied()),
                known.join(", ")
            )),
        }
    }

    /// Takes one of SimGrid's `--cfg` options that choose a collective's
    /// algorithm, `smpi/<collective>:<name>` (as [`Choice::simgrid`]), and
    /// `smpi/coll-selector:default` (SimGrid's default selector, which the
    /// defaults are; a collective's own option still overrides it); any
    /// other key is refused naming those that are taken (`others`: the
    /// caller's, the network's and the semantics' options).
    pub fn simgrid_option(&mut self, key: &str, value: &str, others: &[&str]) -> Result<()> {
        if key == "smpi/coll-selector" {
            return match value {
                "default" => Ok(()),
                other => Err(fail!(
                    Workload,
                    Choice,
                    "--cfg=smpi/coll-selector:{other}: SimGrid's {other} selector is not mapped onto topocoll's algorithms (mapped: default)"
                )),
            };
        }
        if key.starts_with("smpi/") {
            return self.simgrid(key, value);
        }
        Err(fail!(
            Workload,
            Choice,
            "--cfg={key}: not an option replay takes (smpi/<collective>:<algorithm>, {})",
            others.join(", ")
        ))
    }

    /// The algorithm that serves a call of `collective` of `bytes` on a
    /// communicator of `ranks` ranks (the world's when `world`), and how it
    /// sends.
    pub fn serve(
        &self,
        collective: Collective,
        bytes: u64,
        ranks: usize,
        world: bool,
    ) -> Result<Served> {
        let kind = collective.kind();
        if !self.auto[kind as usize] {
            let (algorithm, sends) = self.entry(kind, ranks, bytes);
            return Ok(Served {
                picked: Picked {
                    algorithm,
                    segment_bytes: None,
                },
                sends,
            });
        }
        let Some(picker) = &self.picker else {
            return Err(fail!(
                Workload,
                Choice,
                "{} auto: no tune table was given to choose from",
                kind.name()
            ));
        };
        if !world {
            return Err(fail!(Workload, Choice,
                "{} auto: the tune table is the world's; a call on another communicator needs an algorithm named",
                kind.name()
            ));
        }
        Ok(Served {
            picked: (picker.0)(collective, bytes)?,
            sends: Sends::AsScheduled,
        })
    }

    /// The algorithm that serves `kind` when it is not `auto`, on `ranks`
    /// ranks of `bytes` (a block's, for an alltoall), and how it sends.
    pub fn entry(
        &self,
        kind: CollectiveKind,
        ranks: usize,
        bytes: u64,
    ) -> (&'static Algorithm, Sends) {
        if let Some(a) = self.chosen[kind as usize] {
            return a;
        }
        if kind == CollectiveKind::Alltoall {
            return simgrid_name(kind, smpi_default_alltoall(ranks, bytes))
                .expect("SMPI's default alltoalls are mapped");
        }
        let &(alg, sends) = DEFAULTS
            .iter()
            .find(|d| d.0.collective == kind)
            .expect("every collective has a default");
        (alg, sends)
    }
}

/// The topocoll algorithm SimGrid's `name` for `kind` maps onto, and how
/// it sends ([`SIMGRID_NAMES`]).
fn simgrid_name(kind: CollectiveKind, name: &str) -> Option<(&'static Algorithm, Sends)> {
    SIMGRID_NAMES
        .iter()
        .find(|t| t.1.collective == kind && t.0 == name)
        .map(|&(_, alg, sends)| (alg, sends))
}

/// SMPI's default alltoall, its `alltoall__ompi` (Open MPI 4.1's fixed
/// decision), by the communicator's ranks and a block's bytes: `pair` or
/// `bruck` where it picks them, `basic_linear` where it picks any of
/// linear, linear_sync and two_proc (all three run SMPI's basic_linear).
fn smpi_default_alltoall(ranks: usize, block: u64) -> &'static str {
    const L: &str = "basic_linear";
    const P: &str = "pair";
    const B: &str = "bruck";
    // The pick of the first bound the block is under, `past` above them all.
    let pick = |bounds: &[(u64, &'static str)], past: &'static str| {
        bounds
            .iter()
            .find(|&&(below, _)| block < below)
            .map_or(past, |&(_, name)| name)
    };
    match ranks {
        2 => pick(
            &[
                (2, P),
                (4, L),
                (16, P),
                (64, L),
                (256, P),
                (4096, L),
                (32768, P),
                (1048576, L),
            ],
            P,
        ),
        0..=7 => pick(&[(524288, L), (1048576, P)], L),
        8..=15 => L,
        16..=31 => pick(&[(4, L), (512, B)], L),
        32..=63 => pick(&[(512, B)], L),
        64..=255 => pick(&[(1024, B), (262144, L)], P),
        256..=511 => pick(&[(1024, B), (32768, L)], P),
        512..=1023 => pick(&[(512, B), (262144, L)], P),
        1024..=2047 => pick(&[(512, B)], L),
        2048..=4095 => pick(&[(1024, B)], L),
        _ => pick(&[(2048, B)], L),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every default and every SimGrid name names a registered algorithm.
    #[test]
    fn every_default_and_simgrid_name_is_registered() {
        for (sg, alg, _) in SIMGRID_NAMES {
            let mut c = Choice::default();
            c.simgrid(&format!("smpi/{}", alg.collective.name()), sg)
                .unwrap();
            assert_eq!(c.entry(alg.collective, 4, 64).0.name, alg.name);
        }
        // Each default is of its own collective, one a collective, and in
        // the registry.
        for kind in CollectiveKind::ALL {
            assert_eq!(
                DEFAULTS.iter().filter(|d| d.0.collective == kind).count(),
                1
            );
            let alg = Choice::default().entry(kind, 4, 64).0;
            algorithms::find(kind, alg.name).unwrap();
        }
    }

    /// SimGrid's default selector is the defaults; its others are refused.
    #[test]
    fn the_default_selector_is_taken_and_the_others_refused() {
        let mut c = Choice::default();
        c.simgrid_option("smpi/coll-selector", "default", &[])
            .unwrap();
        assert_eq!(c.entry(CollectiveKind::Reduce, 4, 8).0.name, "linear");
        let e = c
            .simgrid_option("smpi/coll-selector", "mpich", &[])
            .unwrap_err();
        assert!(matches!(
            e,
            crate::error::Error::Workload {
                kind: crate::error::WorkloadKind::Choice,
                ..
            }
        ));
        assert!(e.to_string().contains("(mapped: default)"), "{e}");
    }

    /// An unmapped SimGrid name is refused with the names that are mapped.
    #[test]
    fn an_unmapped_simgrid_name_lists_the_mapped_ones() {
        let e = Choice::default()
            .simgrid("smpi/allreduce", "smp_binomial")
            .unwrap_err()
            .to_string();
        assert!(e.contains("(mapped: default, lr, rdb, rab_rdb)"), "{e}");
    }

    /// The default alltoall is Open MPI's pick by ranks and block size, as
    /// SimGrid's `alltoall__ompi` makes it, at either side of its bounds.
    #[test]
    fn the_default_alltoall_is_open_mpis_pick_by_size() {
        let name = |ranks, block| {
            Choice::default()
                .entry(CollectiveKind::Alltoall, ranks, block)
                .0
                .name
        };
        for (ranks, block, want) in [
            (2, 1, "pairwise"),
            (2, 2, "linear"),
            (2, 8, "pairwise"),
            (2, 1 << 20, "pairwise"),
            (4, 4, "linear"),
            (4, 524287, "linear"),
            (4, 524288, "pairwise"),
            (4, 1 << 20, "linear"),
            (8, 1 << 30, "linear"),
            (16, 3, "linear"),
            (16, 4, "bruck"),
            (16, 512, "linear"),
            (32, 511, "bruck"),
            (64, 1023, "bruck"),
            (64, 262144, "pairwise"),
            (256, 32767, "linear"),
            (256, 32768, "pairwise"),
            (1024, 511, "bruck"),
            (1024, 1 << 20, "linear"),
            (4096, 2047, "bruck"),
            (4096, 2048, "linear"),
        ] {
            assert_eq!(name(ranks, block), want, "{ranks} ranks, {block} B");
        }
        // A choice overrides it.
        let c = Choice::parse("alltoall=ring").unwrap();
        assert_eq!(c.entry(CollectiveKind::Alltoall, 32, 8).0.name, "ring");
    }

    /// `auto` is served by the picker for a world call, with its segment;
    /// refused off the world and with no picker; other collectives keep
    /// their entry.
    #[test]
    fn auto_is_the_pickers_choice_on_the_world_only() {
        let c = Choice::parse("allreduce=auto,bcast=binomial").unwrap();
        assert!(c.has_auto());
        let allreduce = Collective::Allreduce;
        let e = c.serve(allreduce, 64, 4, true).unwrap_err().to_string();
        assert!(e.contains("no tune table"), "{e}");
        let ring = algorithms::find(CollectiveKind::Allreduce, "ring").unwrap();
        let c = c.with_auto(Auto(Arc::new(move |_, bytes| {
            Ok(Picked {
                algorithm: ring,
                segment_bytes: Some(bytes / 2),
            })
        })));
        let s = c.serve(allreduce, 64, 4, true).unwrap();
        assert_eq!(
            (s.picked.algorithm.name, s.picked.segment_bytes),
            ("ring", Some(32))
        );
        assert_eq!(s.sends, Sends::AsScheduled);
        let e = c.serve(allreduce, 64, 4, false).unwrap_err().to_string();
        assert!(e.contains("communicator"), "{e}");
        let b = c
            .serve(Collective::Bcast { root: 1 }, 64, 4, false)
            .unwrap();
        assert_eq!(
            (b.picked.algorithm.name, b.picked.segment_bytes),
            ("binomial", None)
        );
    }
}
