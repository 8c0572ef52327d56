//! The exports irvm does not implement (channels and collectives). Their
//! arguments are checked first, as IREE 3.13's `modules/hal/module.c`
//! checks them (`iree_hal_device_check_deref`, `iree_hal_channel_check_deref`,
//! `iree_vm_buffer_check_deref_or_null`, ...): a ref of the wrong type is
//! INVALID_ARGUMENT as there, and only a well-formed call is refused as
//! UNIMPLEMENTED.

use irvm::{StatusCode, Trap, Value};

use super::Args;

/// The error of a call to the unimplemented export `name` with `values`:
/// INVALID_ARGUMENT naming the first argument IREE would refuse, otherwise
/// UNIMPLEMENTED naming the function.
pub fn refuse(name: &str, values: &[Value]) -> Trap {
    let mut args = Args::new(name, values);
    match check_arguments(name, &mut args) {
        Err(invalid) => invalid,
        Ok(()) => Trap::new(
            StatusCode::Unimplemented,
            format!("hal.{name} is not implemented by irvm yet"),
        ),
    }
}

/// Reads every argument of `name` in order with the check IREE's export
/// makes of it.
fn check_arguments(name: &str, a: &mut Args) -> Result<(), Trap> {
    match name {
        "channel.create" => {
            a.device()?;
            let (_affinity, _flags) = (a.i64()?, a.i64()?);
            let (_id, _group) = (a.vm_buffer_or_null()?, a.vm_buffer_or_null()?);
            let (_rank, _count) = (a.i32()?, a.i32()?);
        }
        "channel.rank_and_count" => a.channel()?,
        "channel.split" => {
            a.channel()?;
            let (_color, _key, _flags) = (a.i32()?, a.i32()?, a.i64()?);
        }
        "command_buffer.collective" => {
            a.command_buffer()?;
            a.channel()?;
            let (_op, _param) = (a.i32()?, a.i32()?);
            let (_send_slot, _recv_slot) = (a.i32()?, a.i32()?);
            let (_send, _recv) = (a.buffer_or_null()?, a.buffer_or_null()?);
            for _offset_length_or_count in 0..5 {
                a.i64()?;
            }
        }
        _ => {}
    }
    Ok(())
}
