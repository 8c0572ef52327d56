//! Where a [`Module`] comes from, one layer above the loader: a file, which
//! holds bytecode or, with the `asm` feature (on by default), VM assembly
//! text; and, with that feature, assembly source in memory. The loader
//! (`vm/loader/`) reads only bytecode; text is assembled here first, as
//! `irvm as` would, and its errors become [`LoadError::Assembly`].

use std::path::Path;

use crate::loader::{LoadError, Module, ModuleBytes};

impl Module {
    /// Loads the file at `path` and verifies it. A file of at most
    /// [`PRIVATE_COPY_BYTES`](crate::loader::PRIVATE_COPY_BYTES) (16 MiB) is
    /// read into a private copy, so changing or truncating the file
    /// afterwards cannot affect the module. A larger file is mapped and
    /// never read into memory (pages are faulted in as accessors touch
    /// them); it must not be truncated or modified while the module (or a
    /// clone) is alive: the mapping would change under the loader's checks,
    /// and a truncated page kills the process with SIGBUS.
    ///
    /// With the `asm` feature, a file of VM assembly text (`.vmasm`: its
    /// first word is `vm.module`) is assembled in memory first, as
    /// `irvm as` would.
    ///
    /// Without the feature such a file is refused as
    /// [`LoadError::AssemblyNotBuiltIn`], not read as bytecode.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Module, LoadError> {
        let path = path.as_ref();
        let bytes = ModuleBytes::read_or_map_file(path)?;
        if Module::looks_like_assembly(bytes.as_slice()) {
            #[cfg(feature = "asm")]
            return Module::from_assembly_file(path);
            #[cfg(not(feature = "asm"))]
            return Err(LoadError::AssemblyNotBuiltIn);
        }
        Module::from_bytes(bytes)
    }

    /// Whether `bytes` look like VM assembly text rather than a binary
    /// module: the first line that is not blank or a `//` comment starts
    /// with `vm.module` (a bytecode file starts with a size prefix, or a
    /// ZIP header, never with that text).
    pub fn looks_like_assembly(bytes: &[u8]) -> bool {
        let head = &bytes[..bytes.len().min(4096)];
        let text = match std::str::from_utf8(head) {
            Ok(t) => t,
            Err(e) => match std::str::from_utf8(&head[..e.valid_up_to()]) {
                Ok(t) => t,
                Err(_) => return false,
            },
        };
        text.lines()
            .map(|l| l.split("//").next().unwrap_or("").trim())
            .find(|l| !l.is_empty())
            .is_some_and(|l| l.starts_with("vm.module"))
    }

    /// Assembles the VM assembly file at `path` and loads the result.
    #[cfg(feature = "asm")]
    pub fn from_assembly_file(path: impl AsRef<Path>) -> Result<Module, LoadError> {
        Module::from_bytes(crate::asm::assemble_file(path.as_ref())?)
    }

    /// Assembles VM assembly `source` (named `file` in diagnostics) and
    /// loads the result.
    #[cfg(feature = "asm")]
    pub fn from_assembly(source: &str, file: &str) -> Result<Module, LoadError> {
        Module::from_bytes(crate::asm::assemble(source, file)?)
    }
}

#[cfg(feature = "asm")]
impl From<crate::asm::AsmErrors> for LoadError {
    fn from(errors: crate::asm::AsmErrors) -> Self {
        LoadError::Assembly(Box::new(errors))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assembly_text_is_told_from_bytecode() {
        assert!(Module::looks_like_assembly(b"vm.module @m version 0\n"));
        assert!(Module::looks_like_assembly(
            b"// a comment\n\n  vm.module @m\n"
        ));
        assert!(!Module::looks_like_assembly(b"\x10\0\0\0IREE"));
        assert!(!Module::looks_like_assembly(b"PK\x03\x04vm.module"));
        assert!(!Module::looks_like_assembly(b""));
    }

    /// Without the assembler a text module is refused by name, not read as
    /// a (nonsense) FlatBuffer size prefix.
    #[cfg(not(feature = "asm"))]
    #[test]
    fn text_without_the_assembler_is_refused_by_name() {
        let dir = std::env::temp_dir().join(format!("irvm-noasm-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("m.vmasm");
        std::fs::write(&path, "vm.module @m version 0\n").unwrap();
        let err = Module::from_file(&path).unwrap_err();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(matches!(err, LoadError::AssemblyNotBuiltIn), "{err}");
        assert!(err.to_string().contains("`asm` feature"), "{err}");
    }

    #[cfg(feature = "asm")]
    #[test]
    fn assembly_errors_keep_their_positions_through_the_load_error() {
        let source = "vm.module @m version 0\nvm.func @f() {\n^bb0:\n  vm.frobnicate\n}\n";
        let Err(LoadError::Assembly(errors)) = Module::from_assembly(source, "m.vmasm") else {
            panic!("text that does not assemble must be a LoadError::Assembly");
        };
        let errors = errors
            .downcast_ref::<crate::asm::AsmErrors>()
            .expect("the box holds the assembler's errors");
        let direct = crate::asm::assemble(source, "m.vmasm").unwrap_err();
        assert_eq!(*errors, direct);
        assert_eq!(errors.0[0].file, "m.vmasm");
        assert!(errors.0[0].line > 1, "{errors}");
    }
}
