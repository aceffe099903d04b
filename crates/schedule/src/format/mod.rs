//! Schedules as text: JSON (topocoll's own format, written and read),
//! LogGOPSim's GOAL (written) and MSCCL's XML algorithms (written and read);
//! a schedule file in either of the two read ([`ScheduleFile`]).

mod file;
mod goal;
mod json;
mod msccl;

pub use file::{FileFormat, ScheduleFile};
pub use goal::{from_goal, from_goal_lines, to_goal};
pub use json::{from_json, from_json_reader, to_json, FORMAT};
pub use msccl::{
    from_msccl_xml, msccl_header, to_msccl_xml, to_msccl_xml_for, MscclBytes, MscclExport,
    MscclHeader, MscclImport,
};
