//! Loading IREE bytecode modules: the FlatBuffer schema bindings, the archive
//! layout of `.vmfb` files, structural verification and zero-copy accessors.
