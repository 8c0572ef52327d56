//! Linking modules into a context: [`Context::register_host_module`],
//! [`Context::register_module`] (a sequence of named steps: bound the
//! module's state sizes, check its dependencies, resolve its types, parse
//! its signatures, link its imports, verify its functions, allocate its
//! globals, run `__init`), the resolution of one import, and
//! [`LinkError`], why a module could not be linked.

use std::collections::HashMap;
use std::sync::Arc;

use super::state::{
    rodata_buffers, BytecodeInstance, Globals, HostInstance, ImportTarget, Registered,
};
use super::Context;
use crate::budget::Charge;
use crate::exec::TieredFunction;
use crate::func::{Func, FuncTarget};
use crate::host::HostModule;
use crate::jit::SharedCode;
use crate::loader::schema::ModuleDependencyFlagBits;
use crate::loader::Module;
use crate::program::{self, ModuleFacts, Signature, VerifyError};
use crate::trap::Trap;
use crate::values::TypeDef;

/// Why modules could not be put together into a context.
#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    /// A required import has no provider: its module is not registered
    /// (`provider_registered` false) or does not export the function.
    #[error(
        "NOT_FOUND; {}; resolving module '{module}' imports",
        if *provider_registered {
            format!("module '{provider}' does not export '{import}'")
        } else {
            format!("module '{provider}' required for import '{import}' is not registered with the context")
        }
    )]
    MissingImport {
        /// The importing module.
        module: String,
        /// The fully qualified import name.
        import: String,
        /// The module the import names.
        provider: String,
        /// Whether a module of that name is registered.
        provider_registered: bool,
    },
    /// The provider's calling convention differs from the import's.
    #[error(
        "INVALID_ARGUMENT; import function {import} signature mismatch between {module} and \
         source {provider}; expected {expected} but got {found}; resolving module '{module}' imports"
    )]
    SignatureMismatch {
        /// The importing module.
        module: String,
        /// The import name.
        import: String,
        /// The exporting module.
        provider: String,
        /// The import's calling convention.
        expected: String,
        /// The export's calling convention.
        found: String,
    },
    /// A required module dependency is missing or too old.
    #[error("module '{module}' depends on '{dependency}' version >= {minimum}, {found}")]
    Dependency {
        /// The dependent module.
        module: String,
        /// The dependency name.
        dependency: String,
        /// Minimum version required.
        minimum: u32,
        /// What was found.
        found: String,
    },
    /// A type named in the module's type table is not registered.
    #[error("module '{module}': no type registered with name '{name}'")]
    UnknownType {
        /// The module.
        module: String,
        /// The type name.
        name: String,
    },
    /// The module's state needs more than the context allows (or a
    /// negative amount).
    #[error("module '{module}': {what} is {value}, outside the context's limit 0..={limit} (see Limits)")]
    StateLimit {
        /// The module.
        module: String,
        /// Which quantity (`global_bytes_capacity`, `global_ref_count`).
        what: &'static str,
        /// The module's value.
        value: i64,
        /// The limit.
        limit: u64,
    },
    /// A calling convention string is malformed.
    #[error("module '{module}': {what} has a malformed calling convention `{cconv}`: {message}")]
    BadSignature {
        /// The module.
        module: String,
        /// Which function or import.
        what: String,
        /// The string.
        cconv: String,
        /// The parse error.
        message: String,
    },
    /// A function failed bytecode verification.
    #[error("module '{module}', function '{function}': {source}")]
    Verify {
        /// The module.
        module: String,
        /// The function's name (or ordinal).
        function: String,
        /// Details.
        source: VerifyError,
    },
    /// The module's bytes held in memory do not fit the context's memory
    /// budget ([`Module::heap_bytes`]).
    #[error("module '{module}' does not fit the memory budget: {trap}")]
    ModuleMemory {
        /// The module.
        module: String,
        /// The RESOURCE_EXHAUSTED trap naming the sizes.
        trap: Trap,
    },
    /// The module's initializer failed.
    #[error("module '{module}' failed to initialize: {trap}")]
    Init {
        /// The module.
        module: String,
        /// The failure.
        trap: Trap,
    },
}

/// A bytecode module's imports, in import order: their signatures, their
/// full names and where each leads.
struct LinkedImports {
    signatures: Vec<Signature>,
    names: Vec<String>,
    targets: Vec<ImportTarget>,
}

impl Context {
    /// Registers a host module (its functions become importable by modules
    /// registered after it).
    pub fn register_host_module(&mut self, module: &dyn HostModule) -> Result<(), LinkError> {
        let name = module.name().to_string();
        let mut funcs = Vec::new();
        for f in module.functions() {
            let sig = Signature::parse(&f.calling_convention).map_err(|message| {
                LinkError::BadSignature {
                    module: name.clone(),
                    what: format!("function '{}'", f.name),
                    cconv: f.calling_convention.clone(),
                    message,
                }
            })?;
            funcs.push((f.name, sig));
        }
        for t in module.ref_types() {
            self.registry.register_type(t.trim_start_matches('!'));
        }
        let state = module
            .instantiate_in(&self.resources)
            .map_err(|trap| LinkError::Init {
                module: name.clone(),
                trap,
            })?;
        self.modules.push(Registered::Host(HostInstance {
            name,
            version: module.version(),
            funcs,
            state,
        }));
        Ok(())
    }

    /// Registers a bytecode module: checks its dependencies, resolves its
    /// imports against the modules registered before it, verifies and
    /// pre-decodes every function, creates its state and runs `__init`.
    ///
    /// A module may share its name with one registered before it (as in
    /// IREE's context): both stay registered, and names resolve to the
    /// newest, so the later one hides the earlier from imports of modules
    /// registered after it and from [`Context::function`].
    pub fn register_module(&mut self, module: Module) -> Result<(), LinkError> {
        let name = module.name().to_string();
        if let Some(ord) = self.register_bytecode(module)? {
            self.run_init(name, ord)?;
        }
        Ok(())
    }

    /// Registers a bytecode module as [`Context::register_module`] does,
    /// but leaves its `__init` to the caller: the function is returned
    /// (`None` when the module has none), to be called, to its end, before
    /// anything else of the module or of modules registered after it runs
    /// (a debugger runs it so, stopping in it as in any function). Until
    /// it has run, the module's globals hold their initial values. When it
    /// fails, the context is no use: the module stays registered (there is
    /// no unregistering a module whose initializer has started).
    pub fn register_module_deferring_init(
        &mut self,
        module: Module,
    ) -> Result<Option<Func>, LinkError> {
        let name = module.name().to_string();
        Ok(self
            .register_bytecode(module)?
            .map(|ordinal| self.init_function(&name, ordinal)))
    }

    /// Registers a bytecode module without running anything; the internal
    /// ordinal of its `__init`, if it has one.
    fn register_bytecode(&mut self, module: Module) -> Result<Option<u32>, LinkError> {
        let name = module.name().to_string();
        let module_charge = Charge::new(
            &self.memory,
            module.heap_bytes(),
            &format!("module '{name}' (its bytes read into memory)"),
        )
        .map_err(|trap| LinkError::ModuleMemory {
            module: name.clone(),
            trap,
        })?;
        self.check_state_sizes(&module, &name)?;
        self.check_dependencies(&module, &name)?;
        let types = self.resolve_types(&module, &name)?;
        let names = function_names(&module);
        let signatures = internal_signatures(&module, &name)?;
        let imports = self.link_imports(&module, &name)?;
        let funcs = verify_functions(&module, &name, &names, &signatures, &imports, &types)?;
        let rodata = rodata_buffers(&module);
        let exports = module
            .exports()
            .iter()
            .map(|e| (e.local_name.to_string(), e.internal_ordinal as u32))
            .collect::<HashMap<_, _>>();
        let has_init = exports.get("__init").copied();
        let globals = self.allocate_globals(&module, &name)?;
        let instance = BytecodeInstance {
            rwdata: globals.rwdata,
            global_refs: globals.refs,
            _state_charge: globals.charge,
            _module_charge: module_charge,
            name: name.clone(),
            module,
            funcs,
            signatures,
            import_sigs: imports.signatures.into_iter().map(Arc::new).collect(),
            import_names: imports.names,
            imports: imports.targets,
            types,
            rodata,
            exports,
            names,
        };
        self.modules.push(Registered::Bytecode(Box::new(instance)));
        Ok(has_init)
    }

    /// The `__init` (internal function `ordinal`) of the module just
    /// registered (the last one), as a function to call.
    fn init_function(&self, name: &str, ordinal: u32) -> Func {
        Func::new(
            self.id,
            FuncTarget::Bytecode {
                module: self.modules.len() as u32 - 1,
                ordinal,
            },
            format!("{name}.__init"),
            Signature::default(),
        )
    }

    /// Bounds the module's state sizes, which come from the file, by the
    /// context's [`Limits`](super::Limits) before anything is allocated.
    fn check_state_sizes(&self, module: &Module, name: &str) -> Result<(), LinkError> {
        let state = module.def().module_state();
        for (what, value, limit) in [
            (
                "global_bytes_capacity",
                state.map_or(0, |s| s.global_bytes_capacity()),
                self.limits.max_global_bytes,
            ),
            (
                "global_ref_count",
                state.map_or(0, |s| s.global_ref_count()),
                self.limits.max_global_refs,
            ),
        ] {
            if value < 0 || value as u64 > limit {
                return Err(LinkError::StateLimit {
                    module: name.to_string(),
                    what,
                    value: value.into(),
                    limit,
                });
            }
        }
        Ok(())
    }

    /// Checks that every required dependency is registered (the newest of
    /// its name) in at least its minimum version.
    fn check_dependencies(&self, module: &Module, name: &str) -> Result<(), LinkError> {
        for dep in module.dependencies() {
            let found = self.modules.iter().rev().find(|m| m.name() == dep.name);
            // IREE's rule (`iree_vm_context_check_module_dependency`): a
            // module found is checked for its version only when the
            // REQUIRED flag is set; a module missing is an error unless the
            // OPTIONAL flag is set.
            let required = dep.flags & ModuleDependencyFlagBits::REQUIRED.bits() != 0;
            match found {
                Some(m) if m.version() >= dep.minimum_version || !required => {}
                Some(m) => {
                    return Err(LinkError::Dependency {
                        module: name.to_string(),
                        dependency: dep.name.to_string(),
                        minimum: dep.minimum_version,
                        found: format!("found version {}", m.version()),
                    })
                }
                None if !dep.optional => {
                    return Err(LinkError::Dependency {
                        module: name.to_string(),
                        dependency: dep.name.to_string(),
                        minimum: dep.minimum_version,
                        found: "but it is not registered".to_string(),
                    })
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The module's type table, each name resolved against the registry's
    /// types.
    fn resolve_types(&self, module: &Module, name: &str) -> Result<Vec<TypeDef>, LinkError> {
        let mut types = Vec::new();
        for t in module.types() {
            let td = self
                .registry
                .resolve_type_name(t)
                .ok_or_else(|| LinkError::UnknownType {
                    module: name.to_string(),
                    name: t.to_string(),
                })?;
            types.push(td);
        }
        Ok(types)
    }

    /// Parses each import's calling convention and links it to an export
    /// of a module registered before (see [`Context::resolve_import`]).
    fn link_imports(&self, module: &Module, name: &str) -> Result<LinkedImports, LinkError> {
        let mut imports = LinkedImports {
            signatures: Vec::new(),
            names: Vec::new(),
            targets: Vec::new(),
        };
        for imp in module.imports() {
            let cconv = imp.calling_convention.unwrap_or("0v_v");
            let sig = Signature::parse(cconv).map_err(|message| LinkError::BadSignature {
                module: name.to_string(),
                what: format!("import '{}'", imp.full_name),
                cconv: cconv.to_string(),
                message,
            })?;
            let target = self.resolve_import(name, imp.full_name, &sig, imp.optional)?;
            imports.signatures.push(sig);
            imports.names.push(imp.full_name.to_string());
            imports.targets.push(target);
        }
        Ok(imports)
    }

    /// The module's globals, charged to the context's memory budget and
    /// allocated fallibly (their sizes come from the file, within Limits).
    fn allocate_globals(&self, module: &Module, name: &str) -> Result<Globals, LinkError> {
        Globals::allocate(
            &self.memory,
            module.global_bytes_capacity(),
            module.global_ref_count(),
        )
        .map_err(|trap| LinkError::Init {
            module: name.to_string(),
            trap,
        })
    }

    /// Runs the `__init` (internal function `ordinal`) of the module just
    /// registered (the last one); when it fails, the module is unregistered
    /// again.
    fn run_init(&mut self, name: String, ordinal: u32) -> Result<(), LinkError> {
        let f = self.init_function(&name, ordinal);
        if let Err(trap) = self.invoke(&f, &[]) {
            // No frame may outlive its function (see `exec::FuncRef`).
            // A call suspended elsewhere made `invoke` fail before
            // pushing any frame of this module, and is kept.
            if !self.stack.is_suspended() {
                self.stack.clear();
            }
            self.modules.pop();
            return Err(LinkError::Init { module: name, trap });
        }
        Ok(())
    }

    fn resolve_import(
        &self,
        module: &str,
        full_name: &str,
        sig: &Signature,
        optional: bool,
    ) -> Result<ImportTarget, LinkError> {
        let found = full_name.split_once('.').and_then(|(m, f)| {
            self.modules
                .iter()
                .enumerate()
                .rev()
                .find(|(_, r)| r.name() == m)
                .and_then(|(i, r)| r.export(i as u32, f))
        });
        match found {
            Some((target, export_sig)) => {
                // The calling conventions must be equal as written, spans
                // included (as the reference's context does): a variadic
                // import never links to a plain export whose flattened kinds
                // happen to match.
                if export_sig.text() != sig.text() {
                    return Err(LinkError::SignatureMismatch {
                        module: module.to_string(),
                        import: full_name.to_string(),
                        provider: full_name.split_once('.').map_or("", |p| p.0).to_string(),
                        expected: sig.text(),
                        found: export_sig.text(),
                    });
                }
                Ok(target)
            }
            None if optional => Ok(ImportTarget::Unresolved),
            None => {
                let provider = full_name.split_once('.').map_or(full_name, |p| p.0);
                Err(LinkError::MissingImport {
                    module: module.to_string(),
                    import: full_name.to_string(),
                    provider: provider.to_string(),
                    provider_registered: self.modules.iter().any(|r| r.name() == provider),
                })
            }
        }
    }
}

/// The name of each internal function as an export names it (the first
/// export of it), or `None`.
fn function_names(module: &Module) -> Vec<Option<String>> {
    let mut names: Vec<Option<String>> = vec![None; module.function_count()];
    for e in &module.exports() {
        if names[e.internal_ordinal].is_none() {
            names[e.internal_ordinal] = Some(e.local_name.to_string());
        }
    }
    names
}

/// The parsed calling convention of each internal function (`0v_v` when
/// it has none, or an empty one: IREE reads an empty string as a function
/// without arguments or results, `iree_vm_function_call_get_cconv_fragments`).
/// Only imports may be variadic.
fn internal_signatures(module: &Module, name: &str) -> Result<Vec<Signature>, LinkError> {
    let mut signatures = Vec::with_capacity(module.function_count());
    for ord in 0..module.function_count() {
        let cconv = module
            .function_signature(ord)
            .and_then(|s| s.calling_convention)
            .filter(|c| !c.is_empty())
            .unwrap_or("0v_v");
        let sig = Signature::parse(cconv).map_err(|message| LinkError::BadSignature {
            module: name.to_string(),
            what: format!("function {ord}"),
            cconv: cconv.to_string(),
            message,
        })?;
        // Only imports may be variadic: an internal function's
        // registers are laid out by its fixed argument list.
        if sig.variadic {
            return Err(LinkError::BadSignature {
                module: name.to_string(),
                what: format!("function {ord}"),
                cconv: cconv.to_string(),
                message: "internal functions cannot have variadic (`C...D`) arguments".into(),
            });
        }
        signatures.push(sig);
    }
    Ok(signatures)
}

/// A module's functions as `program::compile` made them, kept in the
/// module ([`Module::derived`]) so that registering the same module in
/// another context copies them instead of verifying and lowering again.
/// The compilation reads only the module and its type count.
struct Lowered {
    type_count: usize,
    functions: Box<[program::Function]>,
    /// Each function's machine code, compiled once for every context of
    /// the module (`jit::SharedCode`).
    shared: Box<[Arc<SharedCode>]>,
}

/// Verifies and pre-decodes every internal function (`program::compile`)
/// against what the module declares; `names` name the functions in errors.
/// Done once per module: a module registered before is copied from its
/// [`Lowered`] functions (and shares their machine code).
fn verify_functions(
    module: &Module,
    name: &str,
    names: &[Option<String>],
    signatures: &[Signature],
    imports: &LinkedImports,
    types: &[TypeDef],
) -> Result<Vec<Arc<TieredFunction>>, LinkError> {
    let done = module
        .derived()
        .get()
        .and_then(|d| d.downcast_ref::<Lowered>());
    if let Some(done) = done.filter(|d| d.type_count == types.len()) {
        return Ok(done
            .functions
            .iter()
            .zip(done.shared.iter())
            .map(|(f, shared)| Arc::new(TieredFunction::new(f.clone(), shared.clone())))
            .collect());
    }
    let facts = ModuleFacts {
        function_count: module.function_count(),
        signatures,
        imports: &imports.signatures,
        type_count: types.len(),
        rodata_count: module.rodata_count(),
        global_bytes: module.global_bytes_capacity(),
        global_refs: module.global_ref_count(),
    };
    let mut funcs = Vec::with_capacity(module.function_count());
    #[expect(
        clippy::needless_range_loop,
        reason = "`ord` is the function's ordinal too: the module's accessors and the errors take it"
    )]
    for ord in 0..module.function_count() {
        let fname = || {
            names[ord]
                .clone()
                .unwrap_or_else(|| format!("ordinal {ord}"))
        };
        let (desc, code) = match (
            module.function_descriptor(ord),
            module.function_bytecode(ord),
        ) {
            (Some(d), Some(c)) => (d, c),
            _ => {
                return Err(LinkError::Verify {
                    module: name.to_string(),
                    function: fname(),
                    source: VerifyError {
                        ordinal: ord as u32,
                        offset: 0,
                        message: "missing function descriptor".into(),
                    },
                })
            }
        };
        let f = program::compile(
            code,
            ord as u32,
            desc.i32_register_count,
            desc.ref_register_count,
            desc.block_count,
            // The function's own requirements, as the reference's
            // verifier checks them (the module's do not stand in).
            desc.requirements,
            &facts,
        )
        .map_err(|source| LinkError::Verify {
            module: name.to_string(),
            function: fname(),
            source,
        })?;
        funcs.push(Arc::new(TieredFunction::new(f, Arc::default())));
    }
    // A context racing this one may have set it first: either is the same
    // (only their machine code is not shared).
    let _ = module.derived().set(Box::new(Lowered {
        type_count: types.len(),
        functions: funcs.iter().map(|f| program::Function::clone(f)).collect(),
        shared: funcs.iter().map(|f| f.jit.shared().clone()).collect(),
    }));
    Ok(funcs)
}
