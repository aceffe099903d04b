//! `topocoll simulate --model packet`: a schedule run packet by packet on
//! the Dragon net (`sim::packet`).

use super::args::{Given, SimFormat, SimulateArgs};
use crate::schedule;
use crate::sim::packet::{self, Control, PacketConfig};
use crate::units::{format_bytes, parse_bytes};
use anyhow::Result;
use serde::Serialize;
use topocoll_base::Error;

#[derive(Serialize)]
struct Report {
    topology: String,
    collective: String,
    algorithm: String,
    ranks: usize,
    size_bytes: u64,
    buffer_bytes: u64,
    link_rate: f64,
    control: &'static str,
    packet_time_s: f64,
    switch_time_s: f64,
    time_s: f64,
    efficiency: f64,
    max_link_contention: u32,
    delivered_in_order: bool,
    packets: u64,
}

pub fn run(a: SimulateArgs, given: &Given) -> Result<i32> {
    // The flow model's options would be silently ignored: refuse them.
    if let Some(flag) = given.first_of(&["NodeModelArgs", "DriverArgs", "flow_run"]) {
        let hint = if flag == "--bandwidth" {
            " (give --link-rate)"
        } else {
            ""
        };
        return Err(Error::Invalid(format!(
            "{flag}{hint} is an option of the flow model; --model packet takes --buffer, --packet-time, --switch-time, --link-rate and --control"
        ))
        .into());
    }
    let json = match a.format {
        SimFormat::Text => false,
        SimFormat::Json => true,
        other => {
            return Err(Error::Invalid(format!(
                "--format '{}' is not text or json (the packet model runs one schedule)",
                super::args::value_name(&other)
            ))
            .into())
        }
    };
    let buffer = a
        .packet
        .buffer
        .as_deref()
        .ok_or_else(|| Error::Invalid("--model packet needs --buffer BYTES".into()))?;
    let buffer_bytes = parse_bytes(buffer).map_err(|e| Error::Invalid(format!("--buffer: {e}")))?;
    let mut topo = a.topology()?;
    if let Some(rate) = a.packet.link_rate {
        if !(rate.is_finite() && rate > 0.0) {
            return Err(Error::Invalid(format!(
                "--link-rate must be a positive number of bytes/s, got {rate}"
            ))
            .into());
        }
        topo.set_uniform_links(Some(rate), None)?;
    }
    let s = match &a.schedule {
        Some(path) => a.build.read_schedule(path)?,
        None => {
            let name = a.build.algorithm_name()?;
            if name.contains(',') || a.build.size().contains([',', '.']) {
                return Err(Error::Invalid(
                    "--model packet runs one schedule: give one algorithm and one size".into(),
                )
                .into());
            }
            a.build.build(Some(&topo))?
        }
    };
    if !a.no_verify {
        schedule::verify(&s)?;
    }
    let control = match &a.packet.control {
        Some(c) => Control::parse(c)?,
        None if packet::xor_phases(&s).is_ok() => Control::Distributed,
        None => Control::None,
    };
    let cfg = PacketConfig {
        buffer_bytes,
        packet_time_s: a.packet.packet_time.unwrap_or(0.0),
        switch_time_s: a.packet.switch_time.unwrap_or(0.0),
        control,
    };
    let r = packet::simulate(&s, &topo, &cfg)?;
    let report = Report {
        topology: topo.name.clone(),
        collective: s.collective.name().to_string(),
        algorithm: s.algorithm.clone(),
        ranks: s.ranks,
        size_bytes: s.count * s.elem_bytes(),
        buffer_bytes,
        link_rate: topo.links[0].bandwidth,
        control: control.name(),
        packet_time_s: cfg.packet_time_s,
        switch_time_s: cfg.switch_time_s,
        time_s: r.time_s,
        efficiency: r.efficiency,
        max_link_contention: r.max_link_contention,
        delivered_in_order: r.delivered_in_order,
        packets: r.packets,
    };
    if json {
        outln!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(0);
    }
    outln!(
        "{} {} on {}: packet model",
        report.collective,
        report.algorithm,
        topo.describe()
    );
    outln!(
        "size {} per block, buffer {} per packet, link rate {} B/s, control {}, packet time {} s, switch time {} s",
        format_bytes(report.size_bytes),
        format_bytes(buffer_bytes),
        report.link_rate,
        report.control,
        report.packet_time_s,
        report.switch_time_s
    );
    outln!(
        "time                 {}",
        crate::units::format_seconds(r.time_s)
    );
    outln!(
        "efficiency           {:.6}  (payload over link rate while in use)",
        r.efficiency
    );
    outln!("max link contention  {}", r.max_link_contention);
    outln!(
        "delivered in order   {}",
        if r.delivered_in_order { "yes" } else { "no" }
    );
    outln!("packets              {}", r.packets);
    outln!("events               {}", r.events);
    Ok(0)
}
