//! GPU servers from NCCL's topology files (`NCCL_TOPO_FILE`, and what
//! `NCCL_TOPO_DUMP_FILE` writes; RCCL writes the same format), and clusters
//! of such servers joined by a fabric.
//!
//! A file's `<system>` holds `<cpu>` (NUMA nodes), the PCI tree under
//! each (`<pci>` by its `class`: a bridge is a PCIe switch, a GPU class
//! a GPU, a network class a NIC), `<gpu>` with its `<nvlink>` (RCCL:
//! `<xgmi>`) and `<c2c>` links, and `<nic>` with its `<net>` ports. It is
//! read as NCCL's `ncclTopoGetSystemFromXml` (src/graph/topo.cc) reads
//! it, with NCCL's bandwidths (src/graph/topo.h): a PCI link is
//! `link_width` × the lane rate of its `link_speed` / 80 GB/s, an NVLink
//! `count` × the per-link figure of the GPU's SM version, a port its
//! `speed` in Mb/s / 8000, the CPUs of one host joined pairwise at the
//! figure of their architecture. All NVSwitches are one node, as in NCCL.
//! Where NCCL passes over what it does not know (an element, a link
//! speed), this reader refuses it in one line naming the file and line.
//!
//! GPUs are the hosts (ranks), in NCCL's order: by `rank`, then `dev`,
//! then bus id for a GPU the file gives only as a PCI device.

use super::graph::{Duplex, EdgeSpec, Graph, NodeKind, NodeSpec};
use super::{Kind, LinkId, NodeId, Topology, DEFAULT_LATENCY};
use crate::error::fail;
use crate::error::{Error, Result};
use std::collections::HashMap;

/// NCCL's bandwidths, GB/s (src/graph/topo.h), and RCCL's xGMI ones.
mod bw {
    pub const LOC: f64 = 5000.0;
    pub const SM60_NVLINK: f64 = 18.0;
    pub const SM70_NVLINK: f64 = 20.0;
    pub const SM80_NVLINK: f64 = 20.0;
    pub const SM86_NVLINK: f64 = 12.0;
    pub const SM90_NVLINK: f64 = 20.6;
    pub const SM100_NVLINK: f64 = 40.1;
    pub const AMD: f64 = 16.0;
    pub const BDW_QPI: f64 = 6.0;
    pub const SKL_QPI: f64 = 10.0;
    pub const SRP_QPI: f64 = 22.0;
    pub const ERP_QPI: f64 = 40.0;
    pub const ZPI: f64 = 6.0;
    pub const YONGFENG_ZPI: f64 = 9.0;
    pub const P9: f64 = 32.0;
    pub const ARM: f64 = 6.0;
    /// RCCL (src/graph/topo.h, `ncclTopoXGMISpeed`).
    pub const VEGA_XGMI: f64 = 24.0;
    pub const MI200_XGMI: f64 = 36.0;
    pub const GFX94X_XGMI: f64 = 48.0;
}

/// NCCL's GB/s are 10^9 bytes per second.
const GB: f64 = 1e9;

/// NCCL's `ncclTopoNVLinkBw`: the bandwidth of one NVLink by SM version.
pub fn nvlink_bw(sm: u32) -> f64 {
    GB * match sm {
        100.. => bw::SM100_NVLINK,
        90.. => bw::SM90_NVLINK,
        86 => bw::SM86_NVLINK,
        80.. => bw::SM80_NVLINK,
        70.. => bw::SM70_NVLINK,
        60.. => bw::SM60_NVLINK,
        _ => bw::SM80_NVLINK,
    }
}

/// RCCL's `ncclTopoXGMISpeed`: one xGMI link's bandwidth by GPU arch
/// (gfx95x, MI350, takes the gfx94x figure in RCCL's newer sources).
fn xgmi_bw(gcn: &str) -> f64 {
    GB * if gcn.starts_with("gfx90a") {
        bw::MI200_XGMI
    } else if gcn.starts_with("gfx94") || gcn.starts_with("gfx95") {
        bw::GFX94X_XGMI
    } else {
        bw::VEGA_XGMI
    }
}

/// NCCL's `kvDictPciGen`: a lane's rate in 100 Mb/s, matched as NCCL
/// matches it (the entry is a prefix of the text).
const PCI_GEN: &[(&str, f64)] = &[
    ("2.5 GT/s", 15.0),
    ("5 GT/s", 30.0),
    ("8 GT/s", 60.0),
    ("16 GT/s", 120.0),
    ("32 GT/s", 240.0),
    ("2.5 GT/s PCIe", 15.0),
    ("5.0 GT/s PCIe", 30.0),
    ("8.0 GT/s PCIe", 60.0),
    ("16.0 GT/s PCIe", 120.0),
    ("32.0 GT/s PCIe", 240.0),
    ("64.0 GT/s PCIe", 480.0),
];

/// What a PCI class is to NCCL (`kvDictPciClass`, prefix match; anything
/// else is a PCI device), and RCCL's accelerator class for its GPUs.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Class {
    Pci,
    NvSwitch,
    Cpu,
    Gpu,
    Nic,
}

fn class_of(text: &str) -> Class {
    const CLASSES: &[(&str, Class)] = &[
        ("0x060400", Class::Pci),
        ("0x080100", Class::Pci),
        ("0x068000", Class::NvSwitch),
        ("0x068001", Class::Cpu),
        ("0x03", Class::Gpu),
        ("0x02", Class::Nic),
        ("0x120000", Class::Gpu),
    ];
    CLASSES
        .iter()
        .find(|(p, _)| text.starts_with(p))
        .map_or(Class::Pci, |&(_, c)| c)
}

/// What a node of the server is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    Gpu,
    NvSwitch,
    PciSwitch,
    Cpu,
    Nic,
    /// A NIC's port (`<net>`): where the server meets a fabric.
    Port,
}

/// How a link carries data, for the choice of a GPU's NIC (over PCI and
/// the CPUs' links, never NVLink, as NCCL's PCI paths).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Wire {
    NvLink,
    Pci,
    Sys,
    Net,
}

/// A GPU server read from an NCCL topology file.
#[derive(Clone, Debug)]
pub struct Server {
    /// Its network: GPUs are the hosts, in rank order, nodes 0..G.
    pub graph: Graph,
    /// What each node is.
    pub parts: Vec<Part>,
    /// The ports (`<net>`) in `dev` order: node ids.
    pub ports: Vec<NodeId>,
    /// Each GPU's port (index into `ports`), the one NCCL takes: the
    /// nearest over PCI, GPUs spread over equally near ones.
    pub gpu_port: Vec<usize>,
    /// Each GPU's route to its port, over PCI and the CPUs' links.
    pub gpu_to_port: Vec<Vec<LinkId>>,
    /// The smallest `sm` of the file's GPUs (NCCL's `minCompCap`), where
    /// the file gives one.
    pub sm: Option<u32>,
    /// Whether the GPUs are joined by NVLink (or xGMI): NCCL's
    /// `typeIntra` is then `LINK_NVL`, else PCI.
    pub nvlink: bool,
    /// Whether a CPU is AMD's (NCCL's `cpuVendor`, which picks its LL
    /// bandwidth ceiling across servers).
    pub amd_cpu: bool,
}

impl Server {
    pub fn gpus(&self) -> usize {
        self.gpu_port.len()
    }

    pub fn count(&self, part: Part) -> usize {
        self.parts.iter().filter(|&&p| p == part).count()
    }
}

/// A device found in the file, before the nodes are numbered.
struct Dev {
    part: Part,
    name: String,
    line: u32,
    /// GPUs: (rank, dev, bus id) for the order of ranks.
    order: (u64, u64, u64),
}

/// A link found in the file: ends, bandwidth each way, kind.
struct Wiring {
    a: usize,
    b: usize,
    ab: f64,
    ba: f64,
    wire: Wire,
}

/// A GPU's NVLink, xGMI or C2C element, joined once every device is known.
struct GpuLink {
    gpu: usize,
    cpu: usize,
    line: u32,
    tag: &'static str,
    count: f64,
    per_link: Option<f64>,
    target: Target,
}

enum Target {
    Gpu(u64, String),
    NvSwitch,
    Cpu,
}

/// A `<pci>` element where it stands: its bus id, its parent's device,
/// its CPU and the bandwidth of its link to the parent.
#[derive(Clone, Copy)]
struct PciAt<'a, 'input> {
    pci: roxmltree::Node<'a, 'input>,
    bus: u64,
    parent: usize,
    cpu: usize,
    link: f64,
}

struct Reader<'a> {
    file: &'a str,
    devs: Vec<Dev>,
    wires: Vec<Wiring>,
    gpu_links: Vec<GpuLink>,
    pci_links: Vec<(usize, u64, String, u32)>,
    /// Bus id → device, for links that name their target.
    by_bus: HashMap<u64, usize>,
    nvswitch: Option<usize>,
    /// CPUs: (device, host_hash, bandwidth to another CPU of the host, line).
    cpus: Vec<(usize, String, Option<f64>, u32)>,
    ports: Vec<(u64, usize, u32)>,
    /// The GPUs' `sm`, and whether a CPU is AMD's.
    sms: Vec<u32>,
    amd_cpu: bool,
}

fn line_of(e: roxmltree::Node) -> u32 {
    e.document().text_pos_at(e.range().start).row
}

impl Reader<'_> {
    fn err(&self, e: roxmltree::Node, what: impl Into<String>) -> Error {
        let what: String = what.into().chars().filter(|c| !c.is_control()).collect();
        Error::parse(
            self.file,
            line_of(e) as u64,
            format!("<{}>: {what}", e.tag_name().name()),
        )
    }

    fn need<'x>(&self, e: roxmltree::Node<'x, '_>, k: &str) -> Result<&'x str> {
        e.attribute(k)
            .ok_or_else(|| self.err(e, format!("needs '{k}'")))
    }

    fn int(&self, e: roxmltree::Node, k: &str) -> Result<Option<i64>> {
        e.attribute(k)
            .map(|v| {
                let t = v.trim();
                let parsed = match t.strip_prefix("0x") {
                    Some(hex) => i64::from_str_radix(hex, 16).ok(),
                    None => t.parse::<i64>().ok(),
                };
                parsed.ok_or_else(|| self.err(e, format!("{k}=\"{v}\" is not a whole number")))
            })
            .transpose()
    }

    fn add(&mut self, part: Part, name: String, e: roxmltree::Node) -> usize {
        self.devs.push(Dev {
            part,
            name,
            line: line_of(e),
            order: (u64::MAX, u64::MAX, u64::MAX),
        });
        self.devs.len() - 1
    }

    fn wire(&mut self, a: usize, b: usize, bw: f64, wire: Wire) {
        self.wires.push(Wiring {
            a,
            b,
            ab: bw,
            ba: bw,
            wire,
        });
    }

    fn only(&self, e: roxmltree::Node, allowed: &[&str]) -> Result<()> {
        for c in e.children().filter(|n| n.is_element()) {
            let tag = c.tag_name().name();
            if !allowed.contains(&tag) {
                let inside = if allowed.is_empty() {
                    "nothing".to_string()
                } else {
                    allowed
                        .iter()
                        .map(|a| format!("<{a}>"))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                return Err(self.err(
                    c,
                    format!(
                        "is not an element NCCL reads here (<{}> holds {inside})",
                        e.tag_name().name()
                    ),
                ));
            }
        }
        Ok(())
    }

    fn cpu(&mut self, e: roxmltree::Node) -> Result<()> {
        self.only(e, &["pci", "nic"])?;
        let numa = self.int(e, "numaid")?.unwrap_or(self.cpus.len() as i64);
        let host = e.attribute("host_hash").unwrap_or("").to_string();
        let mut name = format!("cpu{numa}");
        if self.devs.iter().any(|d| d.name == name) {
            name = format!("cpu{numa}@{host}");
        }
        let sys = self.cpu_bw(e)?;
        self.amd_cpu |= e.attribute("vendor") == Some("AuthenticAMD");
        let cpu = self.add(Part::Cpu, name, e);
        self.cpus.push((cpu, host, sys, line_of(e)));
        for c in e.children().filter(|n| n.is_element()) {
            match c.tag_name().name() {
                "pci" => self.pci(c, cpu, cpu)?,
                _ => {
                    // A NIC on the CPU itself: NCCL joins it at LOC_BW.
                    let nic = self.add(Part::Nic, format!("nic@{}", self.devs[cpu].name), c);
                    self.wire(cpu, nic, bw::LOC * GB, Wire::Pci);
                    self.nic(c, nic)?;
                }
            }
        }
        Ok(())
    }

    /// NCCL's `ncclTopoGetInterCpuBw`; `None` where the file gives no
    /// `arch` (refused only if the CPU has a CPU to link to).
    fn cpu_bw(&self, e: roxmltree::Node) -> Result<Option<f64>> {
        let Some(arch) = e.attribute("arch") else {
            return Ok(None);
        };
        let v = match arch {
            "ppc64" => bw::P9,
            "arm64" => bw::ARM,
            "x86_64" => {
                let vendor = self.need(e, "vendor")?;
                let family = self.int(e, "familyid")?.unwrap_or(0);
                let model = self.int(e, "modelid")?.unwrap_or(0);
                match vendor {
                    "GenuineIntel" if family == 6 && model >= 0xCF => bw::ERP_QPI,
                    "GenuineIntel" if family == 6 && model >= 0x8F => bw::SRP_QPI,
                    "GenuineIntel" if family == 6 && model >= 0x55 => bw::SKL_QPI,
                    "GenuineIntel" => bw::BDW_QPI,
                    "AuthenticAMD" => bw::AMD,
                    "CentaurHauls" | "  Shanghai  " if family == 7 && model == 0x5B => {
                        bw::YONGFENG_ZPI
                    }
                    "CentaurHauls" | "  Shanghai  " => bw::ZPI,
                    other => {
                        return Err(self.err(
                            e,
                            format!(
                            "vendor '{other}' is not GenuineIntel, AuthenticAMD or CentaurHauls"
                        ),
                        ))
                    }
                }
            }
            other => {
                return Err(self.err(e, format!("arch '{other}' is not x86_64, arm64 or ppc64")))
            }
        };
        Ok(Some(v * GB))
    }

    /// The bandwidth of a `<pci>`'s link to its parent (NCCL's
    /// `ncclTopoAddPci`: width × lane rate / 80, a width of 0 read as 16).
    fn pci_bw(&self, e: roxmltree::Node) -> Result<f64> {
        let mut width = self
            .int(e, "link_width")?
            .ok_or_else(|| self.err(e, "needs 'link_width'"))?;
        if width == 0 {
            width = 16;
        }
        if !(1..=64).contains(&width) {
            return Err(self.err(e, format!("link_width {width} is not 1 to 64 lanes")));
        }
        let speed = self.need(e, "link_speed")?;
        let rate = PCI_GEN
            .iter()
            .find(|(p, _)| speed.starts_with(p))
            .map(|&(_, r)| r)
            .ok_or_else(|| {
                self.err(
                    e,
                    format!(
                        "link_speed \"{speed}\" is not a PCIe speed NCCL knows (2.5, 5, 8, 16, 32 GT/s, or 64.0 GT/s PCIe)"
                    ),
                )
            })?;
        Ok(width as f64 * rate / 80.0 * GB)
    }

    /// Records device `id` at bus id `bus`; the links that name a target
    /// find it by its bus id, so two devices may not share one.
    fn claim_bus(&mut self, e: roxmltree::Node, bus: u64, id: usize) -> Result<()> {
        if let Some(&other) = self.by_bus.get(&bus) {
            let at = self.devs[other].line;
            return Err(self.err(e, format!("bus id given twice (first on line {at})")));
        }
        self.by_bus.insert(bus, id);
        Ok(())
    }

    fn bus(&self, e: roxmltree::Node, text: &str) -> Result<u64> {
        bus_id(text)
            .ok_or_else(|| self.err(e, format!("bus id '{text}' is not one (like 0000:3b:00.0)")))
    }

    fn pci(&mut self, e: roxmltree::Node, parent: usize, cpu: usize) -> Result<()> {
        self.only(e, &["pci", "gpu", "nic", "pcilink"])?;
        let busid = self.need(e, "busid")?;
        let bus = self.bus(e, busid)?;
        let class = class_of(self.need(e, "class")?);
        let link = self.pci_bw(e)?;
        let gpus: Vec<_> = e.children().filter(|c| c.has_tag_name("gpu")).collect();
        let nic = e.children().find(|c| c.has_tag_name("nic"));
        if gpus.len() > 1 {
            return Err(self.err(
                gpus[1],
                "a second <gpu> in one <pci> (MLOPart partitions) is not read",
            ));
        }
        let at = PciAt {
            pci: e,
            bus,
            parent,
            cpu,
            link,
        };
        if !gpus.is_empty() || class == Class::Gpu {
            return self.gpu(&at, gpus.first().copied());
        }
        if nic.is_some() || class == Class::Nic {
            let id = self.add(Part::Nic, format!("nic {busid}"), e);
            self.claim_bus(e, bus, id)?;
            self.wire(parent, id, link, Wire::Pci);
            return match nic {
                Some(n) => self.nic(n, id),
                // A NIC of a file that gives only the PCI tree: one port,
                // at its PCI link's bandwidth (NCCL asks the NIC itself).
                None => {
                    self.port(e, id, None, link)?;
                    Ok(())
                }
            };
        }
        if class != Class::Pci {
            // NCCL makes nothing of an NVSwitch's or CPU's PCI function,
            // nor of what is under it.
            return Ok(());
        }
        let id = self.add(Part::PciSwitch, format!("pci {busid}"), e);
        self.claim_bus(e, bus, id)?;
        self.wire(parent, id, link, Wire::Pci);
        for c in e.children().filter(|n| n.is_element()) {
            if c.has_tag_name("pcilink") {
                let t = self.need(c, "target")?;
                let tb = self.bus(c, t)?;
                self.pci_links.push((id, tb, t.to_string(), line_of(c)));
            } else {
                self.pci(c, id, cpu)?;
            }
        }
        Ok(())
    }

    /// A GPU: the `<pci>` `at` holds, with its `<gpu>` if the file gives one.
    fn gpu(&mut self, at: &PciAt, g: Option<roxmltree::Node>) -> Result<()> {
        let PciAt {
            pci,
            bus,
            parent,
            cpu,
            link,
        } = *at;
        let busid = pci.attribute("busid").unwrap_or("");
        let id = self.add(Part::Gpu, format!("gpu {busid}"), g.unwrap_or(pci));
        self.claim_bus(pci, bus, id)?;
        self.wire(parent, id, link, Wire::Pci);
        let Some(g) = g else {
            self.devs[id].order = (u64::MAX, u64::MAX, bus);
            return Ok(());
        };
        self.only(g, &["nvlink", "xgmi", "c2c"])?;
        let rank = self.int(g, "rank")?.map_or(u64::MAX, |r| r.max(0) as u64);
        let dev = self.int(g, "dev")?.map_or(u64::MAX, |r| r.max(0) as u64);
        self.devs[id].order = (rank, dev, bus);
        let sm = self.int(g, "sm")?;
        self.sms.extend(sm.map(|s| s.max(0) as u32));
        let gcn = g.attribute("gcn");
        for l in g.children().filter(|n| n.is_element()) {
            let tag: &'static str = match l.tag_name().name() {
                "nvlink" => "nvlink",
                "xgmi" => "xgmi",
                _ => "c2c",
            };
            let count = self
                .int(l, "count")?
                .ok_or_else(|| self.err(l, "needs 'count'"))?;
            if !(1..=1024).contains(&count) {
                return Err(self.err(l, format!("count {count} is not 1 to 1024 links")));
            }
            let per_link = match tag {
                "c2c" => {
                    let b = self
                        .int(l, "bw")?
                        .ok_or_else(|| self.err(l, "needs 'bw'"))?;
                    if b <= 0 {
                        return Err(self.err(l, format!("bw {b} is not a positive MB/s")));
                    }
                    Some(b as f64 / 1000.0 * GB)
                }
                "xgmi" => Some(xgmi_bw(gcn.unwrap_or(""))),
                _ => sm.map(|s| nvlink_bw(s.max(0) as u32)),
            };
            let target = if tag == "c2c" {
                Target::Cpu
            } else {
                match class_of(self.need(l, "tclass")?) {
                    Class::Gpu => {
                        let t = self.need(l, "target")?;
                        Target::Gpu(self.bus(l, t)?, t.to_string())
                    }
                    Class::Cpu => Target::Cpu,
                    // NCCL takes every other target (an NVSwitch, a bridge
                    // it cannot see) as the one NVSwitch.
                    _ => Target::NvSwitch,
                }
            };
            if per_link.is_none() {
                return Err(self.err(
                    l,
                    "the <gpu> gives no 'sm', which NCCL's NVLink bandwidth depends on",
                ));
            }
            self.gpu_links.push(GpuLink {
                gpu: id,
                cpu,
                line: line_of(l),
                tag,
                count: count as f64,
                per_link,
                target,
            });
        }
        Ok(())
    }

    fn nic(&mut self, e: roxmltree::Node, nic: usize) -> Result<()> {
        self.only(e, &["net"])?;
        let nets: Vec<_> = e.children().filter(|c| c.has_tag_name("net")).collect();
        for n in nets {
            // NCCL leaves out a port without `dev`.
            if n.attribute("dev").is_none() {
                continue;
            }
            self.only(n, &[])?;
            let dev = self.int(n, "dev")?.unwrap_or(0);
            if dev < 0 {
                return Err(self.err(n, format!("dev {dev} is negative")));
            }
            // NCCL: speed in Mb/s, a speed of 0 or less (some NICs say
            // -1) read as 10000.
            let mbps = match self.int(n, "speed")? {
                Some(s) if s > 0 => s,
                _ => 10000,
            };
            self.port(n, nic, Some(dev as u64), mbps as f64 / 8000.0 * GB)?;
        }
        Ok(())
    }

    fn port(&mut self, e: roxmltree::Node, nic: usize, dev: Option<u64>, bw: f64) -> Result<usize> {
        let key = dev.unwrap_or(u64::MAX);
        if dev.is_some() && self.ports.iter().any(|p| p.0 == key) {
            return Err(self.err(e, format!("a second port with dev {key}")));
        }
        let name = match dev {
            Some(d) => format!("net{d}"),
            None => format!("net@{}", self.devs[nic].name),
        };
        let id = self.add(Part::Port, name, e);
        self.wire(nic, id, bw, Wire::Net);
        self.ports.push((key, id, line_of(e)));
        Ok(id)
    }

    /// The GPUs' links, once every device is known: to a GPU (each way as
    /// its own end declares), to the NVSwitch, to the GPU's CPU.
    fn join_gpus(&mut self) -> Result<()> {
        let mut gpu_pairs: HashMap<(usize, usize), (f64, f64)> = HashMap::new();
        let mut order = Vec::new();
        let links = std::mem::take(&mut self.gpu_links);
        for l in &links {
            let bwv = l.count * l.per_link.unwrap_or(0.0);
            match &l.target {
                Target::Gpu(bus, text) => {
                    let t = match self.by_bus.get(bus) {
                        Some(&t) if self.devs[t].part == Part::Gpu => t,
                        _ => {
                            return Err(Error::parse(
                                self.file,
                                l.line as u64,
                                format!("<{}>: target '{text}' is no GPU of the file", l.tag),
                            ))
                        }
                    };
                    if t == l.gpu {
                        return Err(Error::parse(
                            self.file,
                            l.line as u64,
                            format!("<{}>: target '{text}' is the GPU itself", l.tag),
                        ));
                    }
                    let key = (l.gpu.min(t), l.gpu.max(t));
                    let e = gpu_pairs.entry(key).or_insert_with(|| {
                        order.push(key);
                        (0.0, 0.0)
                    });
                    if l.gpu == key.0 {
                        e.0 += bwv;
                    } else {
                        e.1 += bwv;
                    }
                }
                Target::NvSwitch => {
                    let nvs = match self.nvswitch {
                        Some(n) => n,
                        None => {
                            self.devs.push(Dev {
                                part: Part::NvSwitch,
                                name: "nvswitch".into(),
                                line: l.line,
                                order: (u64::MAX, u64::MAX, u64::MAX),
                            });
                            self.nvswitch = Some(self.devs.len() - 1);
                            self.devs.len() - 1
                        }
                    };
                    self.wire(l.gpu, nvs, bwv, Wire::NvLink);
                }
                Target::Cpu => {
                    let w = if l.tag == "c2c" {
                        Wire::Pci
                    } else {
                        Wire::NvLink
                    };
                    self.wire(l.gpu, l.cpu, bwv, w);
                }
            }
        }
        for key in order {
            let (ab, ba) = gpu_pairs[&key];
            // A link one end alone declares carries as much the other way.
            let (ab, ba) = (
                if ab > 0.0 { ab } else { ba },
                if ba > 0.0 { ba } else { ab },
            );
            self.wires.push(Wiring {
                a: key.0,
                b: key.1,
                ab,
                ba,
                wire: Wire::NvLink,
            });
        }
        for (sw, bus, text, line) in std::mem::take(&mut self.pci_links) {
            match self.by_bus.get(&bus) {
                Some(&t) if self.devs[t].part == Part::PciSwitch => {
                    self.wire(sw, t, bw::LOC * GB, Wire::Pci)
                }
                _ => {
                    return Err(Error::parse(
                        self.file,
                        line as u64,
                        format!("<pcilink>: target '{text}' is no PCI switch of the file"),
                    ))
                }
            }
        }
        Ok(())
    }

    /// NCCL's `ncclTopoConnectCpus`: every two CPUs of one host.
    fn join_cpus(&mut self) -> Result<()> {
        let cpus = self.cpus.clone();
        for (i, a) in cpus.iter().enumerate() {
            for b in &cpus[i + 1..] {
                if a.1 != b.1 {
                    continue;
                }
                let need = |c: &(usize, String, Option<f64>, u32)| {
                    c.2.ok_or_else(|| {
                        Error::parse(
                            self.file,
                            c.3 as u64,
                            "<cpu>: needs 'arch' (and vendor, familyid, modelid), which NCCL prices the link between CPUs by",
                        )
                    })
                };
                let (ab, ba) = (need(a)?, need(b)?);
                self.wires.push(Wiring {
                    a: a.0,
                    b: b.0,
                    ab,
                    ba,
                    wire: Wire::Sys,
                });
            }
        }
        Ok(())
    }
}

/// A PCI bus id (`0000:3b:00.0`, `ffff:ff:01.0`) as NCCL's
/// `busIdToInt64` reads it: its hex digits in order.
fn bus_id(text: &str) -> Option<u64> {
    let t = text.trim();
    let digits: String = t.chars().filter(|c| *c != ':' && *c != '.').collect();
    if digits.is_empty() || digits.len() > 16 || !t.contains(':') {
        return None;
    }
    u64::from_str_radix(&digits, 16).ok()
}

/// Whether `text` is an XML file whose root element is `<system>` (an
/// NCCL topology file), not `<platform>` (SimGrid's).
pub fn is_nccl_xml(text: &str) -> bool {
    let mut rest = text.trim_start_matches('\u{feff}');
    loop {
        rest = rest.trim_start();
        if let Some(r) = rest.strip_prefix("<?") {
            match r.find("?>") {
                Some(i) => rest = &r[i + 2..],
                None => return false,
            }
        } else if let Some(r) = rest.strip_prefix("<!--") {
            match r.find("-->") {
                Some(i) => rest = &r[i + 3..],
                None => return false,
            }
        } else if let Some(r) = rest.strip_prefix("<!") {
            match r.find('>') {
                Some(i) => rest = &r[i + 1..],
                None => return false,
            }
        } else {
            return rest.strip_prefix("<system").is_some_and(|r| {
                r.starts_with(|c: char| c.is_whitespace() || c == '>' || c == '/')
            });
        }
    }
}

/// Reads a server from the text of an NCCL topology file.
pub fn parse_server(file: &str, text: &str) -> Result<Server> {
    let doc = roxmltree::Document::parse(text).map_err(|e| {
        let said: String = e.to_string().chars().filter(|c| !c.is_control()).collect();
        Error::parse(file, e.pos().row as u64, format!("not XML: {said}"))
    })?;
    let root = doc.root_element();
    let mut r = Reader {
        file,
        devs: Vec::new(),
        wires: Vec::new(),
        gpu_links: Vec::new(),
        pci_links: Vec::new(),
        by_bus: HashMap::new(),
        nvswitch: None,
        cpus: Vec::new(),
        ports: Vec::new(),
        sms: Vec::new(),
        amd_cpu: false,
    };
    if root.tag_name().name() != "system" {
        return Err(r.err(
            root,
            "the root element of an NCCL topology file is <system>",
        ));
    }
    if let Some(v) = r.int(root, "version")? {
        // NCCL writes version 1, RCCL version 2; the elements are the same.
        if !(1..=2).contains(&v) {
            return Err(r.err(root, format!("version {v} is not 1 (NCCL) or 2 (RCCL)")));
        }
    }
    r.only(root, &["cpu"])?;
    for c in root.children().filter(|n| n.is_element()) {
        r.cpu(c)?;
    }
    r.join_gpus()?;
    r.join_cpus()?;
    build(r)
}

/// Numbers the nodes (GPUs first, in rank order), makes the network and
/// each GPU's port.
fn build(r: Reader) -> Result<Server> {
    let file = r.file;
    let mut gpus: Vec<usize> = (0..r.devs.len())
        .filter(|&i| r.devs[i].part == Part::Gpu)
        .collect();
    if gpus.is_empty() {
        return Err(fail!(Topology, File, "{file}: the file has no GPU"));
    }
    gpus.sort_by_key(|&i| r.devs[i].order);
    let mut id = vec![0usize; r.devs.len()];
    let mut order = gpus.clone();
    order.extend((0..r.devs.len()).filter(|&i| r.devs[i].part != Part::Gpu));
    for (n, &d) in order.iter().enumerate() {
        id[d] = n;
    }
    let mut names: Vec<String> = Vec::with_capacity(order.len());
    for (k, &d) in order.iter().enumerate() {
        let dev = &r.devs[d];
        names.push(if dev.part == Part::Gpu {
            format!("gpu{k}")
        } else {
            dev.name.clone()
        });
    }
    // Names must be unique for the graph: a repeated bus id is a mistake.
    let mut seen = std::collections::HashSet::new();
    for (k, n) in names.iter().enumerate() {
        if !seen.insert(n.as_str()) {
            return Err(Error::parse(
                file,
                r.devs[order[k]].line as u64,
                format!("a second device named '{n}' (a bus id given twice)"),
            ));
        }
    }
    let nodes: Vec<NodeSpec> = order
        .iter()
        .zip(&names)
        .map(|(&d, n)| NodeSpec {
            name: n.clone(),
            kind: if r.devs[d].part == Part::Gpu {
                NodeKind::Host
            } else {
                NodeKind::Switch
            },
        })
        .collect();
    let parts: Vec<Part> = order.iter().map(|&d| r.devs[d].part).collect();
    // NVLinks first, so that of two routes as short the NVLink one wins
    // (NCCL prefers NVLink to PCI).
    let mut wires: Vec<&Wiring> = r.wires.iter().collect();
    wires.sort_by_key(|w| w.wire != Wire::NvLink);
    // Links of one kind between the same two nodes add up (NCCL's
    // `ncclTopoConnectNodes`).
    let mut merged: Vec<(usize, usize, f64, f64, Wire)> = Vec::new();
    let mut at: HashMap<(usize, usize, Wire), usize> = HashMap::new();
    for w in wires {
        let (a, b) = (id[w.a], id[w.b]);
        let (key, ab, ba) = if a < b {
            ((a, b, w.wire), w.ab, w.ba)
        } else {
            ((b, a, w.wire), w.ba, w.ab)
        };
        match at.get(&key) {
            Some(&i) => {
                merged[i].2 += ab;
                merged[i].3 += ba;
            }
            None => {
                at.insert(key, merged.len());
                merged.push((key.0, key.1, ab, ba, key.2));
            }
        }
    }
    let edges: Vec<EdgeSpec> = merged
        .iter()
        .map(|&(a, b, ab, ba, _)| EdgeSpec {
            a: names[a].clone(),
            b: names[b].clone(),
            bandwidth_ab: Some(ab),
            bandwidth_ba: Some(ba),
            duplex: Duplex::Full,
            ..Default::default()
        })
        .collect();
    let wire_of_link: Vec<Wire> = merged.iter().flat_map(|m| [m.4, m.4]).collect();
    check_reached(file, &r, &order, &merged, &gpus)?;
    let graph = Graph::network(&nodes, &edges, 1.0, DEFAULT_LATENCY)
        .map_err(|e| fail!(Topology, File, "{file}: {e}"))?;
    let mut ports = r.ports.clone();
    ports.sort_by_key(|p| (p.0, id[p.1]));
    let ports: Vec<NodeId> = ports.iter().map(|p| id[p.1] as NodeId).collect();
    let (gpu_port, gpu_to_port) = nearest_ports(&graph, &wire_of_link, gpus.len(), &ports);
    Ok(Server {
        graph,
        parts,
        ports,
        gpu_port,
        gpu_to_port,
        sm: r.sms.iter().copied().min(),
        nvlink: merged.iter().any(|m| m.4 == Wire::NvLink),
        amd_cpu: r.amd_cpu,
    })
}

/// Refuses a GPU that no link joins to rank 0's GPU, naming its line
/// (a file of several hosts, by `host_hash`, has no link between them).
fn check_reached(
    file: &str,
    r: &Reader,
    order: &[usize],
    merged: &[(usize, usize, f64, f64, Wire)],
    gpus: &[usize],
) -> Result<()> {
    let n = order.len();
    let mut adj = vec![Vec::new(); n];
    for &(a, b, _, _, _) in merged {
        adj[a].push(b);
        adj[b].push(a);
    }
    let mut seen = vec![false; n];
    let mut stack = vec![0usize];
    seen[0] = true;
    while let Some(v) = stack.pop() {
        for &u in &adj[v] {
            if !seen[u] {
                seen[u] = true;
                stack.push(u);
            }
        }
    }
    if let Some(k) = (0..gpus.len()).find(|&k| !seen[k]) {
        return Err(Error::parse(
            file,
            r.devs[gpus[k]].line as u64,
            format!(
                "<gpu>: no link reaches rank {k}'s GPU from rank 0's (a file of two hosts, by host_hash, is two servers)"
            ),
        ));
    }
    // A device no link reaches from the GPUs (a CPU or NIC of another
    // host) has no part in the server: refused as well, at its line.
    if let Some(k) = (0..n).find(|&k| !seen[k]) {
        let d = &r.devs[order[k]];
        return Err(Error::parse(
            file,
            d.line as u64,
            format!(
                "{}: no link reaches it from rank 0's GPU (a file of two hosts, by host_hash, is two servers)",
                d.name
            ),
        ));
    }
    Ok(())
}

/// Each GPU's port, as NCCL picks a GPU's NIC: the nearest over PCI and
/// the CPUs' links (the same PCIe switch before the same CPU before
/// another CPU), the GPUs that have the same nearest ports spread over
/// them in rank order; and the route to it.
fn nearest_ports(
    g: &Graph,
    wire: &[Wire],
    gpus: usize,
    ports: &[NodeId],
) -> (Vec<usize>, Vec<Vec<LinkId>>) {
    if ports.is_empty() {
        return (vec![usize::MAX; gpus], vec![Vec::new(); gpus]);
    }
    let links = g.links();
    let n = g.num_nodes();
    let mut spread: HashMap<Vec<usize>, usize> = HashMap::new();
    let mut chosen = Vec::with_capacity(gpus);
    let mut routes = Vec::with_capacity(gpus);
    for gpu in 0..gpus {
        // Breadth first from the GPU over links that are not NVLink.
        let mut prev = vec![LinkId::MAX; n];
        let mut dist = vec![usize::MAX; n];
        dist[gpu] = 0;
        let mut queue = std::collections::VecDeque::from([gpu as NodeId]);
        while let Some(v) = queue.pop_front() {
            for &(u, l) in g.neighbours(v) {
                if wire[l as usize] == Wire::NvLink || dist[u as usize] != usize::MAX {
                    continue;
                }
                // A GPU relays nothing over PCI.
                if u as usize != gpu && (u as usize) < gpus {
                    continue;
                }
                dist[u as usize] = dist[v as usize] + 1;
                prev[u as usize] = l;
                queue.push_back(u);
            }
        }
        let best = ports
            .iter()
            .map(|&p| dist[p as usize])
            .min()
            .unwrap_or(usize::MAX);
        let near: Vec<usize> = (0..ports.len())
            .filter(|&k| dist[ports[k] as usize] == best)
            .collect();
        let turn = spread.entry(near.clone()).or_insert(0);
        let k = near[*turn % near.len()];
        *turn += 1;
        let mut route = Vec::new();
        let mut cur = ports[k];
        while cur as usize != gpu && prev[cur as usize] != LinkId::MAX {
            let l = prev[cur as usize];
            route.push(l);
            cur = links[l as usize].from;
        }
        route.reverse();
        chosen.push(k);
        routes.push(route);
    }
    (chosen, routes)
}

/// The server of an NCCL topology file as a topology: its GPUs the ranks.
pub fn parse_server_topology(name: &str, text: &str) -> Result<Topology> {
    let s = parse_server(name, text)?;
    let layout = GpuLayout::of(&s, 1, None);
    let mut t = Topology::from_kind(name, Kind::Graph(s.graph));
    t.gpus = Some(std::sync::Arc::new(layout));
    Ok(t)
}

/// What NCCL's channels know of GPU servers beyond their links: which
/// server each rank is on, each GPU's nearest NIC port, and the route of a
/// message between servers through the ports a channel names
/// (`Topology::gpus`, for a topology read from NCCL's files). Ranks are
/// GPUs server by server: rank s·G + g is GPU g of server s.
#[derive(Clone, Debug)]
pub struct GpuLayout {
    pub servers: usize,
    /// GPUs per server.
    pub gpus: usize,
    /// NIC ports per server, in `dev` order.
    pub ports: usize,
    /// Each local GPU's port (NCCL's nearest NIC, [`Server::gpu_port`]).
    pub gpu_port: Vec<usize>,
    /// NCCL's `minCompCap` (`sm`), where the file gives it.
    pub sm: Option<u32>,
    /// Whether the GPUs of a server are joined by NVLink or xGMI.
    pub nvlink: bool,
    /// Whether a CPU is AMD's.
    pub amd_cpu: bool,
    /// The bandwidth of each port's own link (bytes/s).
    pub port_bandwidth: Vec<f64>,
    /// Between servers: the cluster's routes through named ports.
    cluster: Option<std::sync::Arc<cluster::ClusterRouter>>,
}

impl GpuLayout {
    fn of(
        s: &Server,
        servers: usize,
        cluster: Option<std::sync::Arc<cluster::ClusterRouter>>,
    ) -> GpuLayout {
        let links = s.graph.links();
        let port_bandwidth = s
            .ports
            .iter()
            .map(|&p| {
                links
                    .iter()
                    .filter(|l| l.from == p)
                    .map(|l| l.bandwidth)
                    .fold(0.0, f64::max)
            })
            .collect();
        GpuLayout {
            servers,
            gpus: s.gpus(),
            ports: s.ports.len(),
            gpu_port: s.gpu_port.clone(),
            sm: s.sm,
            nvlink: s.nvlink,
            amd_cpu: s.amd_cpu,
            port_bandwidth,
            cluster,
        }
    }

    /// The server of `rank`.
    pub fn server(&self, rank: usize) -> usize {
        rank / self.gpus
    }

    /// The links from `a` to `b`, ranks of two servers, leaving `a`'s
    /// server by its port `out` and entering `b`'s by its port `into`:
    /// the server's shortest route from the GPU to the port (over NVLink
    /// to another GPU first where that is as short, as NCCL's PXN), the
    /// fabric's route between the two ports, and the route from the port
    /// to the GPU. `None` where the ranks share a server or the layout has
    /// no fabric.
    pub fn path_via(&self, a: usize, b: usize, out: usize, into: usize) -> Option<Vec<LinkId>> {
        let c = self.cluster.as_ref()?;
        if self.server(a) == self.server(b) || out >= self.ports || into >= self.ports {
            return None;
        }
        c.route_via(a, b, out, into)
    }
}

mod cluster;
pub use cluster::{cluster, is_cluster, parse_cluster};

#[cfg(test)]
mod tests;
