//! Which tier runs bytecode: the interpreter, compiled machine code, or
//! both (compiling functions once they are hot).

use std::fmt;
use std::str::FromStr;

/// How a context executes bytecode functions ([`crate::Context::set_engine`],
/// `irvm run --engine`; a new context starts from the `IRVM_ENGINE`
/// environment variable, else `Auto`).
///
/// Both tiers behave identically: same results, same traps at the same
/// function, offset and source line. Compiled code runs only in a context
/// with no observer, tracer, fuel, deadline, interrupt or pause request set;
/// with any of those the interpreter runs every instruction. Instructions
/// the compiler does not translate (calls, refs, lists, yields, ...) leave
/// compiled code for the interpreter, which goes back into compiled code at
/// the next loop back edge. Builds without the `jit` feature, and platforms
/// Cranelift does not support, always interpret.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Engine {
    /// Interpret every instruction.
    Interp,
    /// Compile every function the first time it runs (at its entry or at a
    /// loop back edge), however briefly it runs. For testing the compiler.
    Jit,
    /// Interpret, and compile a function once its loops have taken
    /// [`Engine::HOT_BACK_EDGES`] back edges (the default).
    #[default]
    Auto,
}

impl Engine {
    /// Back edges a function's loops take in the interpreter before
    /// [`Engine::Auto`] compiles it: tens of microseconds of interpretation,
    /// a fraction of what compiling a function costs, so code that runs
    /// briefly never pays for the compiler.
    pub const HOT_BACK_EDGES: u32 = 20_000;

    /// Whether this build can compile on this machine (the `jit` feature on
    /// a target Cranelift supports).
    pub fn compiler_available() -> bool {
        crate::jit::available()
    }
}

/// A new context's engine: `IRVM_ENGINE` (`interp`, `jit` or `auto`) when
/// set to one of those, else [`Engine::Auto`]. The variable lets a whole
/// test suite, or a program embedding irvm, run on one tier without code
/// changes.
pub(crate) fn default_engine() -> Engine {
    static DEFAULT: std::sync::OnceLock<Engine> = std::sync::OnceLock::new();
    *DEFAULT.get_or_init(|| {
        std::env::var("IRVM_ENGINE")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or_default()
    })
}

impl FromStr for Engine {
    type Err = String;
    fn from_str(s: &str) -> Result<Engine, String> {
        match s {
            "interp" => Ok(Engine::Interp),
            "jit" => Ok(Engine::Jit),
            "auto" => Ok(Engine::Auto),
            other => Err(format!(
                "unknown engine '{other}' (expected interp, jit or auto)"
            )),
        }
    }
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Engine::Interp => "interp",
            Engine::Jit => "jit",
            Engine::Auto => "auto",
        })
    }
}
