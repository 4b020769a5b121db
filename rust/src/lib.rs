//! Apache Kafka's on-disk and wire record formats (legacy message sets magic 0 and 1, the
//! v2 record batch, records, control records, the offset, time and transaction indexes) and
//! the payloads of Kafka's internal topics, read from the same Kaitai Struct schemas as
//! kafkacodec's Python parsers and Go package (the modules under `gen` are written by
//! kafkacodec's generator: do not edit them), with the same checks: CRC-32C and CRC-32,
//! Kafka's bounds on lengths, counts and varints, and the codecs Kafka compresses with.
//!
//! Every parser reads a byte slice and borrows from it: byte fields are slices of the input,
//! or of a decompressed region kept in the caller's [`Arena`]; strings borrow when they are
//! UTF-8. A parser returns an [`Error`] that names the schema, the byte and what was wrong;
//! no input makes it panic.
#![forbid(unsafe_code)]

pub mod compression;
pub mod gen;
pub mod records;
pub mod runtime;

pub use gen::*;
pub use runtime::{crc32, crc32c, java_str, java_utf8, Arena, Check, Error, Result, Tree};
