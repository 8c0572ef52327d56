//! The instruction set (placeholder while the table is written).
