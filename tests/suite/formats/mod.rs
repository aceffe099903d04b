//! The file formats read and written: schedule JSON, MSCCL XML, SimGrid
//! platforms.

mod json;
mod msccl;
mod msccl_real;
mod platform;
mod simgrid_examples;
