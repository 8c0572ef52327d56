//! Which tier runs bytecode: the interpreter, compiled machine code, or
//! both (compiling functions once they are hot).

use std::fmt;
use std::str::FromStr;

/// The execution tier: how a context runs bytecode functions
/// ([`crate::Context::set_tier`],
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
///
/// Compiling is bounded: a function over the compiling tier's size limit
/// stays interpreted (every compile below it measured under 100 ms and
/// 15 MB of heap), a compile is charged to the context's memory budget
/// while it runs, and a panic in the code generator leaves the function
/// to the interpreter ([`crate::Context::functions_left_to_interpreter`]
/// says which and why). With `Auto`, a large function compiles on a
/// background thread while the interpreter runs on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Tier {
    /// Interpret every instruction.
    Interp,
    /// Compile every function the first time it runs (at its entry or at a
    /// loop back edge), however briefly it runs. For testing the compiler.
    Jit,
    /// Interpret, and compile a function once its loops have taken
    /// [`Tier::HOT_BACK_EDGES`] back edges (the default).
    #[default]
    Auto,
}

impl Tier {
    /// Back edges a function's loops take in the interpreter before
    /// [`Tier::Auto`] compiles it: tens of microseconds of interpretation,
    /// a fraction of what compiling a function costs, so code that runs
    /// briefly never pays for the compiler.
    pub const HOT_BACK_EDGES: u32 = 20_000;

    /// Whether this build can compile on this machine (the `jit` feature on
    /// a target Cranelift supports).
    pub fn compiler_available() -> bool {
        crate::jit::available()
    }
}

/// A new context's tier: `IRVM_ENGINE` (`interp`, `jit` or `auto`) when
/// set to one of those, else [`Tier::Auto`]. The variable lets a whole
/// test suite, or a program embedding irvm, run on one tier without code
/// changes.
pub(crate) fn default_tier() -> Tier {
    static DEFAULT: std::sync::OnceLock<Tier> = std::sync::OnceLock::new();
    *DEFAULT.get_or_init(|| {
        std::env::var("IRVM_ENGINE")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or_default()
    })
}

impl FromStr for Tier {
    type Err = String;
    fn from_str(s: &str) -> Result<Tier, String> {
        match s {
            "interp" => Ok(Tier::Interp),
            "jit" => Ok(Tier::Jit),
            "auto" => Ok(Tier::Auto),
            other => Err(format!(
                "unknown engine '{other}' (expected interp, jit or auto)"
            )),
        }
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Tier::Interp => "interp",
            Tier::Jit => "jit",
            Tier::Auto => "auto",
        })
    }
}
