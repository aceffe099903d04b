//! The Dragon net paper's Figure 4: link efficiency V/Vmax of the
//! all-to-all against the switch element's buffer length, on 16 nodes
//! (32 switch elements), with the paper's distributed phase control and the
//! centralised control it replaced; then the same on 2^8 and 2^10 nodes.
//!
//! Parameters (the paper prints only Vmax):
//! - link rate 1.3 MB/s, the paper's Vmax (T800 links through a switch);
//! - a switch element's processor takes 190 µs per packet: one T800 serves
//!   both inputs, so it keeps up with two packets per link time from
//!   2 × 190 µs × 1.3 MB/s = 494 bytes, the buffer length from which the
//!   paper measured at least 98%;
//! - centralised control sets every switch up in 1 ms per switch-over,
//!   after the phase's last packet has arrived (a central controller
//!   reaching 32 elements);
//! - blocks of 16 KiB per pair on 16 nodes (32 packets of 512 bytes per
//!   phase); on the larger networks, smaller blocks so that a run stays
//!   under a minute (2^8: 4 KiB, 2^10: 2 KiB), and buffers from 64 and 256
//!   bytes up. `--quick` runs 16 and 64 nodes.

use super::plot::{self, Scale, Series};
use crate::algorithms::{self, Request};
use crate::error::Result;
use crate::schedule::{Collective, Dtype, ReduceOp};
use crate::sim::packet::{self, Control, PacketConfig};
use crate::topology::parse_spec;
use std::fmt::Write;
use std::path::Path;

pub struct Settings {
    pub quick: bool,
}

pub const LINK_RATE: f64 = 1.3e6;
pub const PACKET_TIME_S: f64 = 190e-6;
pub const SETUP_TIME_S: f64 = 1e-3;

#[derive(Clone, Copy)]
struct Point {
    nodes: usize,
    block: u64,
    buffer: u64,
    control: Control,
}

struct Row {
    point: Point,
    efficiency: f64,
    time_s: f64,
}

/// The all-to-all `dragon_net` on `dragonnet:nodes`, packet by packet.
fn run_point(p: &Point) -> Result<Row> {
    let mut topo = parse_spec(&format!("dragonnet:{}", p.nodes))?;
    topo.set_uniform_links(Some(LINK_RATE), Some(0.0))?;
    let req = Request::new(
        Collective::Alltoall,
        p.nodes,
        p.block,
        Dtype::U8,
        ReduceOp::Sum,
        Some(&topo),
    )?;
    let s = algorithms::build(&algorithms::alltoall::dragon::DRAGON_NET, &req)?;
    let cfg = PacketConfig {
        buffer_bytes: p.buffer,
        packet_time_s: PACKET_TIME_S,
        switch_time_s: SETUP_TIME_S,
        control: p.control,
    };
    let r = packet::simulate(&s, &topo, &cfg)?;
    Ok(Row {
        point: *p,
        efficiency: r.efficiency,
        time_s: r.time_s,
    })
}

pub fn run(dir: &Path, settings: &Settings) -> Result<String> {
    let mut networks: Vec<(usize, u64, Vec<u64>)> = vec![(
        16,
        16 << 10,
        vec![16, 32, 64, 128, 256, 512, 1024, 2048, 4096],
    )];
    if settings.quick {
        networks.push((64, 4 << 10, vec![64, 256, 512, 4096]));
    } else {
        networks.push((256, 4 << 10, vec![64, 128, 256, 512, 1024, 2048, 4096]));
        networks.push((1024, 2 << 10, vec![256, 512, 1024, 2048]));
    }
    let mut points = Vec::new();
    for (nodes, block, buffers) in &networks {
        for control in [Control::Distributed, Control::Centralised] {
            for &buffer in buffers {
                points.push(Point {
                    nodes: *nodes,
                    block: *block,
                    buffer,
                    control,
                });
            }
        }
    }
    // The largest networks and smallest buffers first: they take longest.
    let mut order: Vec<usize> = (0..points.len()).collect();
    order.sort_by_key(|&i| {
        std::cmp::Reverse(
            points[i].nodes as u64 * points[i].nodes as u64 * points[i].block / points[i].buffer,
        )
    });
    let rows = super::run_in_order(&points, &order, "dragonnet", run_point)?;
    let mut csv = String::from("nodes,control,buffer_bytes,efficiency\n");
    let mut times = String::from("nodes,control,buffer_bytes,block_bytes,time_s\n");
    for r in &rows {
        let p = &r.point;
        let _ = writeln!(
            csv,
            "{},{},{},{:.6}",
            p.nodes,
            p.control.name(),
            p.buffer,
            r.efficiency
        );
        let _ = writeln!(
            times,
            "{},{},{},{},{:.9e}",
            p.nodes,
            p.control.name(),
            p.buffer,
            p.block,
            r.time_s
        );
    }
    super::write(dir, "efficiency.csv", &csv)?;
    super::write(dir, "times.csv", &times)?;
    let mut series = Vec::new();
    for (nodes, _, _) in &networks {
        for control in [Control::Distributed, Control::Centralised] {
            series.push(Series {
                name: format!("{nodes} nodes, {}", control.name()),
                points: rows
                    .iter()
                    .filter(|r| r.point.nodes == *nodes && r.point.control == control)
                    .map(|r| (r.point.buffer as f64, r.efficiency))
                    .collect(),
            });
        }
    }
    plot::line_chart(
        &dir.join("efficiency"),
        "Dragon net all-to-all: link efficiency V/Vmax",
        ("buffer length (bytes)", Scale::Log),
        ("V / Vmax", Scale::Linear),
        &series,
    )?;
    let mut summary = String::new();
    let at = |nodes: usize, control: Control, buffer: u64| {
        rows.iter()
            .find(|r| {
                r.point.nodes == nodes && r.point.control == control && r.point.buffer == buffer
            })
            .map_or(f64::NAN, |r| r.efficiency)
    };
    let _ = writeln!(
        summary,
        "Dragon net, 16 nodes, link rate {LINK_RATE} B/s, {} us per packet, {} ms set-up",
        PACKET_TIME_S * 1e6,
        SETUP_TIME_S * 1e3
    );
    for buffer in [16u64, 256, 512, 4096] {
        let _ = writeln!(
            summary,
            "  buffer {buffer:>5} B: distributed {:.3}, centralised {:.3}",
            at(16, Control::Distributed, buffer),
            at(16, Control::Centralised, buffer)
        );
    }
    let _ = writeln!(
        summary,
        "  (paper: at least 0.98 from 500 B, falling for smaller buffers)"
    );
    Ok(summary)
}
