//! The messages of Chakra's execution traces, written by hand after
//! MLCommons' schema `et_def.proto` (beside this file, with its source and
//! licence in its README): each struct and field has the schema's name
//! and field number, so that prost reads and writes what Chakra's own
//! protobuf code does, and the build needs no `protoc`.

// Field for field the schema's: its names, its documentation.
#![allow(missing_docs)]

/// A named value of a node or of the metadata (`comm_type`, `comm_size`,
/// `num_ops`, ...).
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct AttributeProto {
    #[prost(string, tag = "1")]
    pub name: ::prost::alloc::string::String,
    #[prost(string, tag = "2")]
    pub doc_string: ::prost::alloc::string::String,
    #[prost(
        oneof = "attribute_proto::Value",
        tags = "3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32"
    )]
    pub value: ::core::option::Option<attribute_proto::Value>,
}

/// `AttributeProto`'s `oneof value`.
pub mod attribute_proto {
    #[derive(Clone, PartialEq, ::prost::Oneof)]
    pub enum Value {
        #[prost(double, tag = "3")]
        DoubleVal(f64),
        #[prost(message, tag = "4")]
        DoubleList(super::DoubleList),
        #[prost(float, tag = "5")]
        FloatVal(f32),
        #[prost(message, tag = "6")]
        FloatList(super::FloatList),
        #[prost(int32, tag = "7")]
        Int32Val(i32),
        #[prost(message, tag = "8")]
        Int32List(super::Int32List),
        #[prost(int64, tag = "9")]
        Int64Val(i64),
        #[prost(message, tag = "10")]
        Int64List(super::Int64List),
        #[prost(uint32, tag = "11")]
        Uint32Val(u32),
        #[prost(message, tag = "12")]
        Uint32List(super::Uint32List),
        #[prost(uint64, tag = "13")]
        Uint64Val(u64),
        #[prost(message, tag = "14")]
        Uint64List(super::Uint64List),
        #[prost(sint32, tag = "15")]
        Sint32Val(i32),
        #[prost(message, tag = "16")]
        Sint32List(super::Sint32List),
        #[prost(sint64, tag = "17")]
        Sint64Val(i64),
        #[prost(message, tag = "18")]
        Sint64List(super::Sint64List),
        #[prost(fixed32, tag = "19")]
        Fixed32Val(u32),
        #[prost(message, tag = "20")]
        Fixed32List(super::Fixed32List),
        #[prost(fixed64, tag = "21")]
        Fixed64Val(u64),
        #[prost(message, tag = "22")]
        Fixed64List(super::Fixed64List),
        #[prost(sfixed32, tag = "23")]
        Sfixed32Val(i32),
        #[prost(message, tag = "24")]
        Sfixed32List(super::Sfixed32List),
        #[prost(sfixed64, tag = "25")]
        Sfixed64Val(i64),
        #[prost(message, tag = "26")]
        Sfixed64List(super::Sfixed64List),
        #[prost(bool, tag = "27")]
        BoolVal(bool),
        #[prost(message, tag = "28")]
        BoolList(super::BoolList),
        #[prost(string, tag = "29")]
        StringVal(::prost::alloc::string::String),
        #[prost(message, tag = "30")]
        StringList(super::StringList),
        #[prost(bytes = "vec", tag = "31")]
        BytesVal(::prost::alloc::vec::Vec<u8>),
        #[prost(message, tag = "32")]
        BytesList(super::BytesList),
    }
}

#[derive(Clone, PartialEq, ::prost::Message)]
pub struct DoubleList {
    #[prost(double, repeated, tag = "1")]
    pub values: ::prost::alloc::vec::Vec<f64>,
}

#[derive(Clone, PartialEq, ::prost::Message)]
pub struct FloatList {
    #[prost(float, repeated, tag = "1")]
    pub values: ::prost::alloc::vec::Vec<f32>,
}

#[derive(Clone, PartialEq, ::prost::Message)]
pub struct Int32List {
    #[prost(int32, repeated, tag = "1")]
    pub values: ::prost::alloc::vec::Vec<i32>,
}

#[derive(Clone, PartialEq, ::prost::Message)]
pub struct Int64List {
    #[prost(int64, repeated, tag = "1")]
    pub values: ::prost::alloc::vec::Vec<i64>,
}

#[derive(Clone, PartialEq, ::prost::Message)]
pub struct Uint32List {
    #[prost(uint32, repeated, tag = "1")]
    pub values: ::prost::alloc::vec::Vec<u32>,
}

#[derive(Clone, PartialEq, ::prost::Message)]
pub struct Uint64List {
    #[prost(uint64, repeated, tag = "1")]
    pub values: ::prost::alloc::vec::Vec<u64>,
}

#[derive(Clone, PartialEq, ::prost::Message)]
pub struct Sint32List {
    #[prost(sint32, repeated, tag = "1")]
    pub values: ::prost::alloc::vec::Vec<i32>,
}

#[derive(Clone, PartialEq, ::prost::Message)]
pub struct Sint64List {
    #[prost(sint64, repeated, tag = "1")]
    pub values: ::prost::alloc::vec::Vec<i64>,
}

#[derive(Clone, PartialEq, ::prost::Message)]
pub struct Fixed32List {
    #[prost(fixed32, repeated, tag = "1")]
    pub values: ::prost::alloc::vec::Vec<u32>,
}

#[derive(Clone, PartialEq, ::prost::Message)]
pub struct Fixed64List {
    #[prost(fixed64, repeated, tag = "1")]
    pub values: ::prost::alloc::vec::Vec<u64>,
}

#[derive(Clone, PartialEq, ::prost::Message)]
pub struct Sfixed32List {
    #[prost(sfixed32, repeated, tag = "1")]
    pub values: ::prost::alloc::vec::Vec<i32>,
}

#[derive(Clone, PartialEq, ::prost::Message)]
pub struct Sfixed64List {
    #[prost(sfixed64, repeated, tag = "1")]
    pub values: ::prost::alloc::vec::Vec<i64>,
}

#[derive(Clone, PartialEq, ::prost::Message)]
pub struct BoolList {
    #[prost(bool, repeated, tag = "1")]
    pub values: ::prost::alloc::vec::Vec<bool>,
}

#[derive(Clone, PartialEq, ::prost::Message)]
pub struct StringList {
    #[prost(string, repeated, tag = "1")]
    pub values: ::prost::alloc::vec::Vec<String>,
}

#[derive(Clone, PartialEq, ::prost::Message)]
pub struct BytesList {
    #[prost(bytes = "vec", repeated, tag = "1")]
    pub values: ::prost::alloc::vec::Vec<Vec<u8>>,
}

/// A trace file's first message.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct GlobalMetadata {
    #[prost(string, tag = "1")]
    pub version: ::prost::alloc::string::String,
    #[prost(message, repeated, tag = "2")]
    pub attr: ::prost::alloc::vec::Vec<AttributeProto>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, ::prost::Enumeration)]
#[repr(i32)]
pub enum NodeType {
    InvalidNode = 0,
    MetadataNode = 1,
    MemLoadNode = 2,
    MemStoreNode = 3,
    CompNode = 4,
    CommSendNode = 5,
    CommRecvNode = 6,
    CommCollNode = 7,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, ::prost::Enumeration)]
#[repr(i32)]
pub enum CollectiveCommType {
    AllReduce = 0,
    Reduce = 1,
    AllGather = 2,
    Gather = 3,
    Scatter = 4,
    Broadcast = 5,
    AllToAll = 6,
    ReduceScatter = 7,
    ReduceScatterBlock = 8,
    Barrier = 9,
}

/// One node of a rank's graph: an operation and what it waits for.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct Node {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    #[prost(string, tag = "2")]
    pub name: ::prost::alloc::string::String,
    #[prost(enumeration = "NodeType", tag = "3")]
    pub r#type: i32,
    #[prost(uint64, repeated, tag = "4")]
    pub ctrl_deps: ::prost::alloc::vec::Vec<u64>,
    #[prost(uint64, repeated, tag = "5")]
    pub data_deps: ::prost::alloc::vec::Vec<u64>,
    #[prost(uint64, tag = "6")]
    pub start_time_micros: u64,
    #[prost(uint64, tag = "7")]
    pub duration_micros: u64,
    #[prost(message, optional, tag = "8")]
    pub inputs: ::core::option::Option<IoInfo>,
    #[prost(message, optional, tag = "9")]
    pub outputs: ::core::option::Option<IoInfo>,
    #[prost(message, repeated, tag = "10")]
    pub attr: ::prost::alloc::vec::Vec<AttributeProto>,
}

/// The schema's `IOInfo`.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct IoInfo {
    #[prost(string, tag = "1")]
    pub values: ::prost::alloc::string::String,
    #[prost(string, tag = "2")]
    pub shapes: ::prost::alloc::string::String,
    #[prost(string, tag = "3")]
    pub types: ::prost::alloc::string::String,
}

#[derive(Clone, PartialEq, ::prost::Message)]
pub struct Tensor {
    #[prost(uint64, tag = "1")]
    pub tensor_id: u64,
    #[prost(uint64, tag = "2")]
    pub storage_id: u64,
    #[prost(uint64, tag = "3")]
    pub offset: u64,
    #[prost(uint64, tag = "4")]
    pub num_elem: u64,
    #[prost(uint64, tag = "5")]
    pub elem_bytes: u64,
    #[prost(string, tag = "6")]
    pub device: ::prost::alloc::string::String,
}
