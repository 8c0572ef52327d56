//! IREE's `io_parameters` module for irvm: model weights kept outside the
//! module, in parameter archives.

pub mod archive;
