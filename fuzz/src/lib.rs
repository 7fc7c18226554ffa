//! Shared support for the fuzz targets: the allocation guard and the checks each target runs.
//!
//! Every target binary links this library, so [`alloc_guard`]'s `#[global_allocator]` is
//! installed in every one of them.

pub mod alloc_guard;
pub mod harness;
