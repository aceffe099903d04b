//! `tune --export-nccl`: NCCL's algorithms and protocols tuned by
//! simulation, written as the configuration NCCL's example tuner plugin
//! reads (NVIDIA/nccl `ext-tuner/example`, `plugins/tuner/example` in
//! newer releases: `nccl_tuner.conf`, parsed by its `plugin.c`), one CSV
//! line a size range:
//!
//! `collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,regBuff`
//!
//! with NCCL's names (`broadcast`, `reduce`, `allgather`,
//! `reducescatter`, `allreduce`; `tree`, `ring`, `pat`, ...; `ll`,
//! `ll128`, `simple`), byte counts as NCCL gives its tuner (the
//! collective's bytes over every rank for allgather and reduce_scatter,
//! `ncclFuncMaxSendRecvCount`), and -1 for "any".

use crate::error::fail;
use crate::error::{Error, Result};
use crate::price::{price, Build, Check};
use topocoll_algorithms::model::nccl::NcclAlgo;
use topocoll_algorithms::nccl::{Channels, Protocol};
use topocoll_algorithms::{Algorithm, Request, ALGORITHMS};
use topocoll_schedule::{Collective, CollectiveKind, Dtype, ReduceOp};
use topocoll_sim::SimConfig;
use topocoll_topology::Topology;

/// The example plugin's collective names (`parseCollType`).
pub fn collective_name(kind: CollectiveKind) -> Option<&'static str> {
    Some(match kind {
        CollectiveKind::Bcast => "broadcast",
        CollectiveKind::Reduce => "reduce",
        CollectiveKind::Allgather => "allgather",
        CollectiveKind::ReduceScatter => "reducescatter",
        CollectiveKind::Allreduce => "allreduce",
        _ => return None,
    })
}

/// The plugin's algorithm names (`parseAlgorithm`).
pub const ALGORITHM_NAMES: [&str; 7] = [
    "tree",
    "ring",
    "collnet_direct",
    "collnet_chain",
    "nvls",
    "nvls_tree",
    "pat",
];

/// The plugin's protocol names (`parseProtocol`).
pub const PROTOCOL_NAMES: [&str; 3] = ["ll", "ll128", "simple"];

/// One line of the plugin's file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    pub collective: String,
    pub min_bytes: u64,
    pub max_bytes: u64,
    pub algorithm: String,
    pub protocol: String,
    /// -1: NCCL's own choice.
    pub channels: i64,
    pub nodes: i64,
    pub ranks: i64,
    /// The optional fields (`None`: the line leaves them out).
    pub pipe_ops: Option<i64>,
    pub reg_buff: Option<i64>,
}

impl Line {
    /// The line as the plugin reads it.
    pub fn text(&self) -> String {
        let mut s = format!(
            "{},{},{},{},{},{},{},{}",
            self.collective,
            self.min_bytes,
            self.max_bytes,
            self.algorithm,
            self.protocol,
            self.channels,
            self.nodes,
            self.ranks
        );
        for f in [self.pipe_ops, self.reg_buff].into_iter().flatten() {
            s += &format!(",{f}");
        }
        s
    }

    /// A line of the file read as the example plugin reads one
    /// (`plugin.c`: comma-separated, 8 to 10 fields, its names), or why it
    /// would not take it; `None` for a comment or an empty line.
    pub fn parse(text: &str) -> Result<Option<Line>> {
        let t = text.trim();
        if t.is_empty() || t.starts_with('#') {
            return Ok(None);
        }
        // plugin.c reads lines into 256-byte buffers.
        if t.len() >= 256 {
            return Err(fail!(Optimize, Tuner, "a line of 256 bytes or more: {t}"));
        }
        let f: Vec<&str> = t.split(',').map(str::trim).collect();
        if !(8..=10).contains(&f.len()) {
            return Err(fail!(
                Optimize,
                Tuner,
                "{} fields, not 8 to 10: {t}",
                f.len()
            ));
        }
        let known = |v: &str, names: &[&str], what: &str| -> Result<String> {
            if names.contains(&v) {
                Ok(v.to_string())
            } else {
                Err(fail!(
                    Optimize,
                    Tuner,
                    "{what} '{v}' is none of {}: {t}",
                    names.join(", ")
                ))
            }
        };
        let colls = [
            "broadcast",
            "reduce",
            "allgather",
            "reducescatter",
            "allreduce",
        ];
        let bytes = |v: &str| {
            v.parse::<u64>()
                .map_err(|_| fail!(Optimize, Tuner, "'{v}' is not a byte count: {t}"))
        };
        let int = |v: &str| {
            v.parse::<i64>()
                .ok()
                .filter(|&n| n == -1 || n > 0)
                .ok_or_else(|| fail!(Optimize, Tuner, "'{v}' is neither -1 nor a count: {t}"))
        };
        let flag = |v: &str| {
            v.parse::<i64>()
                .ok()
                .filter(|n| (-1..=1).contains(n))
                .ok_or_else(|| fail!(Optimize, Tuner, "regBuff '{v}' is not -1, 0 or 1: {t}"))
        };
        let line = Line {
            collective: known(f[0], &colls, "collective")?,
            min_bytes: bytes(f[1])?,
            max_bytes: bytes(f[2])?,
            algorithm: known(f[3], &ALGORITHM_NAMES, "algorithm")?,
            protocol: known(f[4], &PROTOCOL_NAMES, "protocol")?,
            channels: int(f[5])?,
            nodes: int(f[6])?,
            ranks: int(f[7])?,
            pipe_ops: f.get(8).map(|v| int(v)).transpose()?,
            reg_buff: f.get(9).map(|v| flag(v)).transpose()?,
        };
        if line.min_bytes > line.max_bytes {
            return Err(fail!(Optimize, Tuner, "min_bytes above max_bytes: {t}"));
        }
        Ok(Some(line))
    }
}

/// The fastest NCCL algorithm and protocol at one size, by simulation.
#[derive(Clone, Debug)]
pub struct Pick {
    /// The collective's bytes as NCCL counts them for its tuner.
    pub nccl_bytes: u64,
    pub algorithm: &'static Algorithm,
    pub protocol: Protocol,
    pub channels: usize,
    pub time_s: f64,
}

/// The NCCL algorithm a registry entry is.
fn algo_of(a: &Algorithm) -> Option<NcclAlgo> {
    NcclAlgo::ALL.into_iter().find(|x| x.entry() == a.name)
}

/// Each size's fastest NCCL algorithm and protocol for `collective` on
/// `topo` under `config`, at `channels` (NCCL's default for the network
/// when `None`): every NCCL entry of the collective with each protocol
/// NCCL runs it with (PAT with Simple alone), built, verified and
/// simulated. `sizes` are `--size`'s (a block for allgather).
#[allow(clippy::too_many_arguments)]
pub fn tune(
    collective: Collective,
    dtype: Dtype,
    op: ReduceOp,
    topo: &Topology,
    config: &SimConfig,
    sizes: &[u64],
    channels: Option<usize>,
) -> Result<Vec<Pick>> {
    if collective_name(collective.kind()).is_none() {
        return Err(fail!(Optimize, Tuner,
            "--export-nccl: NCCL's tuner takes broadcast, reduce, allgather, reducescatter and allreduce, not {}",
            collective.name()
        ));
    }
    let mut picks = Vec::new();
    for &size in sizes {
        let mut best: Option<Pick> = None;
        for a in ALGORITHMS
            .iter()
            .filter(|a| a.channels && a.collective == collective.kind())
        {
            let Some(algo) = algo_of(a) else { continue };
            for p in Protocol::ALL {
                if algo == NcclAlgo::Pat && p != Protocol::Simple {
                    continue;
                }
                let mut req =
                    Request::new(collective, topo.num_ranks(), size, dtype, op, Some(topo))?;
                req.channels = channels;
                req.protocol = Some(p);
                let priced = match price(
                    &req,
                    a,
                    topo,
                    std::slice::from_ref(config),
                    Check::Verify,
                    Build::StreamIfLarge,
                ) {
                    Ok(x) => x,
                    Err(Error::Algorithm(topocoll_algorithms::Error::Unsupported { .. })) => {
                        continue
                    }
                    Err(e) => return Err(e),
                };
                let t = priced.runs[0].time_s;
                if best.as_ref().is_none_or(|b| t < b.time_s) {
                    let nccl_bytes = size
                        * if collective.size_is_block() {
                            topo.num_ranks() as u64
                        } else {
                            1
                        };
                    best = Some(Pick {
                        nccl_bytes,
                        algorithm: a,
                        protocol: p,
                        channels: Channels::new(&req)?.count(),
                        time_s: t,
                    });
                }
            }
        }
        picks.extend(best);
    }
    Ok(picks)
}

/// The plugin's lines for `picks` (in increasing size): a size's range
/// runs from the byte after the size before it (0 for the first) to the
/// size (the last to 4294967295, the example's end, or the size if
/// larger), equal neighbours merged, matching `nodes` servers of `ranks`
/// ranks.
pub fn lines(collective: Collective, picks: &[Pick], nodes: usize, ranks: usize) -> Vec<Line> {
    let name = collective_name(collective.kind()).unwrap_or("allreduce");
    let mut out: Vec<Line> = Vec::new();
    let mut lo = 0;
    for (i, p) in picks.iter().enumerate() {
        let hi = if i + 1 == picks.len() {
            p.nccl_bytes.max(u32::MAX as u64)
        } else {
            p.nccl_bytes
        };
        let algorithm = algo_of(p.algorithm)
            .map_or("ring", NcclAlgo::name)
            .to_string();
        let protocol = p.protocol.name().to_ascii_lowercase();
        let line = Line {
            collective: name.to_string(),
            min_bytes: lo,
            max_bytes: hi,
            algorithm,
            protocol,
            channels: p.channels as i64,
            nodes: nodes as i64,
            ranks: ranks as i64,
            pipe_ops: Some(-1),
            reg_buff: Some(-1),
        };
        match out.last_mut() {
            Some(last)
                if (&last.algorithm, &last.protocol, last.channels)
                    == (&line.algorithm, &line.protocol, line.channels) =>
            {
                last.max_bytes = hi
            }
            _ => out.push(line),
        }
        lo = hi + 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example() -> String {
        let p = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/data/nccl/nccl_tuner.conf"
        );
        std::fs::read_to_string(p).unwrap()
    }

    /// Every configuration line of NCCL's own example file reads, field by
    /// field, as the plugin reads it: 8, 9 and 10 fields, NCCL's names, -1
    /// for any; and each is written back as it was.
    #[test]
    fn the_example_tuner_file_reads_field_by_field() {
        let text = example();
        let lines: Vec<Line> = text
            .lines()
            .filter_map(|l| Line::parse(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 9);
        let first = &lines[0];
        assert_eq!(
            (first.collective.as_str(), first.min_bytes, first.max_bytes),
            ("allreduce", 0, 65536)
        );
        assert_eq!(
            (first.algorithm.as_str(), first.protocol.as_str()),
            ("tree", "simple")
        );
        assert_eq!((first.channels, first.nodes, first.ranks), (2, 1, -1));
        assert_eq!((first.pipe_ops, first.reg_buff), (Some(-1), Some(1)));
        let eight = lines.iter().find(|l| l.collective == "reduce").unwrap();
        assert_eq!((eight.pipe_ops, eight.reg_buff), (None, None));
        let fields: Vec<usize> = lines.iter().map(|l| l.text().split(',').count()).collect();
        // The example has lines of 8 and of 10 fields; 9 (numPipeOps
        // alone) reads too, as plugin.c reads it.
        assert!(fields.contains(&8) && fields.contains(&10));
        let nine = Line::parse("allgather,0,4294967295,ring,simple,4,2,-1,1")
            .unwrap()
            .unwrap();
        assert_eq!((nine.pipe_ops, nine.reg_buff), (Some(1), None));
        for (l, raw) in lines.iter().zip(
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#')),
        ) {
            assert_eq!(l.text(), raw);
        }
    }

    #[test]
    fn lines_the_plugin_would_not_take_are_refused() {
        for bad in [
            "allreduce,0,10,ring,simple,2,1",
            "alltoall,0,10,ring,simple,2,1,-1",
            "allreduce,0,10,ring,ll64,2,1,-1",
            "allreduce,0,10,bine,simple,2,1,-1",
            "allreduce,10,0,ring,simple,2,1,-1",
            "allreduce,0,10,ring,simple,2,1,-1,-1,2",
            "allreduce,0,x,ring,simple,2,1,-1",
        ] {
            assert!(Line::parse(bad).is_err(), "{bad}");
        }
    }
}
