//! The executor's part of a profile (`crate::profile`): a sample of the
//! call stack when the stop word asks for one (the loops call
//! [`take_sample`] where they answer the word), and host calls timed
//! exactly, with the call site's source location lent to the host module
//! while it runs.

use std::sync::Arc;

use super::{Frame, Stack};
use crate::context::{describe_frame, Context, Registered};
use crate::profile::{Profile, SampledFrame, SpanKind};
use crate::program::Inst;

/// A context's profile and its sampling state.
pub(crate) struct ProfileHook {
    pub profile: Arc<Profile>,
    /// Whether stacks are sampled (the loops then poll the stop word).
    pub sampled: bool,
    /// Whether host calls are timed (for the samples' tables or the
    /// timeline; a profile for dispatch totals alone needs neither).
    pub timed: bool,
    /// The context's id (frames of different contexts differ).
    pub context: u64,
    /// When the last sample was taken (or the invocation began).
    pub last_ns: u64,
    /// Host-call time since then: timed apart, not the sample's.
    pub host_ns: u64,
    /// The memory in use the timeline's counter last showed.
    pub last_memory: u64,
    /// Each host function called, by (module, function index): whether
    /// it waits, and its ids in the profile.
    host_functions: rustc_hash::FxHashMap<(u32, u32), (SpanKind, (u32, u32))>,
}

impl ProfileHook {
    /// The hook of `profile` for context `context`.
    pub fn new(profile: Arc<Profile>, context: u64) -> ProfileHook {
        let now = profile.now_ns();
        let sampled = profile.options().sample_every.is_some();
        ProfileHook {
            sampled,
            timed: sampled || profile.options().timeline,
            profile,
            context,
            last_ns: now,
            host_ns: 0,
            last_memory: 0,
            host_functions: Default::default(),
        }
    }

    /// An invocation begins: time before it is nobody's.
    pub fn restart(&mut self) {
        self.last_ns = self.profile.now_ns();
        self.host_ns = 0;
    }
}

/// The instruction index frame `f` is at: `top_pc` for the top frame when
/// given, else the call before its saved pc (callers, and a frame making
/// a host call), or the saved pc itself for a top frame stopped between
/// instructions.
fn frame_pc(f: &Frame, top: bool, top_pc: Option<usize>, in_call: bool) -> usize {
    let pc = f.pc as usize;
    match (top, top_pc) {
        (true, Some(at)) => at,
        (true, None) if !in_call => pc,
        _ => pc.saturating_sub(1),
    }
}

/// Frames of a sampled stack kept: the outermost [`OUTER_FRAMES`], a
/// marker, and the innermost rest; a deeper stack (deep recursion) would
/// cost a hash lookup per frame per sample and a copy per distinct depth.
const MAX_SAMPLED_FRAMES: usize = 128;
/// Outermost frames kept of a stack deeper than [`MAX_SAMPLED_FRAMES`].
const OUTER_FRAMES: usize = 32;
/// The marker frame's key: no context has this id.
const ELIDED_KEY: crate::profile::FrameKey = (u64::MAX, 0, 0, 0);

/// The frame ids of the stack, outermost first (at most
/// [`MAX_SAMPLED_FRAMES`], the middle of a deeper one elided), and the top
/// frame's source location.
fn stack_ids(
    hook: &ProfileHook,
    modules: &[Registered],
    stack: &Stack,
    top_pc: Option<usize>,
    in_call: bool,
) -> (Vec<u32>, Option<Arc<str>>) {
    let n = stack.frames.len();
    let inner_from = if n > MAX_SAMPLED_FRAMES {
        n - (MAX_SAMPLED_FRAMES - OUTER_FRAMES - 1)
    } else {
        OUTER_FRAMES.min(n)
    };
    // `None`: the marker where frames were left out.
    let mut kept: Vec<Option<(usize, u32)>> = Vec::with_capacity(n.min(MAX_SAMPLED_FRAMES));
    for k in (0..OUTER_FRAMES.min(n)).chain(inner_from..n) {
        if k == inner_from && n > MAX_SAMPLED_FRAMES {
            kept.push(None);
        }
        let f = &stack.frames[k];
        let pc = frame_pc(f, k + 1 == n, top_pc, in_call);
        let offsets = &f.func.offsets;
        let offset = offsets
            .get(pc.min(offsets.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0);
        kept.push(Some((k, offset)));
    }
    let keys: Vec<crate::profile::FrameKey> = kept
        .iter()
        .map(|k| match k {
            Some((k, offset)) => {
                let f = &stack.frames[*k];
                (hook.context, f.module, f.func.ordinal, *offset)
            }
            None => ELIDED_KEY,
        })
        .collect();
    hook.profile.frame_ids(&keys, |i| match kept[i] {
        None => SampledFrame {
            function: "[deeper frames elided]".into(),
            location: None,
        },
        Some((k, offset)) => {
            let f = &stack.frames[k];
            let d = describe_frame(modules, f.module, f.func.ordinal, offset);
            SampledFrame {
                function: format!("{}.{}", d.module, d.function),
                // Line 0 is no place (an initializer's recorded command
                // buffers are there): the first enclosing call that has
                // one, else none.
                location: d.source.iter().find(|p| p.line > 0).map(|p| p.to_string()),
            }
        }
    })
}

/// Answers a sample request: records the stack, weighted by the time
/// since the last sample less the host calls in between. `at`: the
/// instruction the top frame is at (the hooked loop), else its saved pc.
#[cold]
#[inline(never)]
pub(crate) fn take_sample(ctx: &mut Context, at: Option<*const Inst>) {
    let Context {
        hooks,
        modules,
        stack,
        ..
    } = ctx;
    let Some(hook) = hooks.profile.as_mut() else {
        return;
    };
    let top_pc = at.and_then(|at| {
        let top = stack.frames.last()?;
        // SAFETY: `at` is an instruction of the top frame's code (the
        // hooked loop's `ip`).
        Some(unsafe { at.offset_from(top.func.code.as_ptr()) } as usize)
    });
    let now = hook.profile.now_ns();
    let ran = now
        .saturating_sub(hook.last_ns)
        .saturating_sub(hook.host_ns);
    hook.last_ns = now;
    hook.host_ns = 0;
    if ran == 0 || stack.frames.is_empty() {
        return;
    }
    let (ids, _) = stack_ids(hook, modules, stack, top_pc, false);
    hook.profile.sample(&ids, now - ran, now);
}

/// A host call under way while profiling: its stack and start.
pub(crate) struct HostCallTiming {
    stack: Vec<u32>,
    /// `None`: the call is not timed (a profile of dispatch totals alone).
    start_ns: Option<u64>,
}

/// Before a host call from bytecode (the top frame's pc is past the
/// call): lends the call site's location to the host modules and starts
/// the clock. `None` without a profile.
#[inline]
pub(crate) fn host_call_begins(
    hooks: &mut super::hooks::Hooks,
    modules: &[Registered],
    stack: &Stack,
    resources: &crate::ContextResources,
) -> Option<HostCallTiming> {
    let hook = hooks.profile.as_mut()?;
    if !hook.timed {
        // Dispatch totals alone: only the call site is wanted.
        let top = stack.frames.len().saturating_sub(1);
        let location = stack.frames.get(top).and_then(|f| {
            let pc = frame_pc(f, true, None, true);
            let offset = f.func.offsets.get(pc).copied().unwrap_or(0);
            let key = (hook.context, f.module, f.func.ordinal, offset);
            let (_, location) = hook.profile.frame_ids(&[key], |_| {
                let d = describe_frame(modules, f.module, f.func.ordinal, offset);
                SampledFrame {
                    function: format!("{}.{}", d.module, d.function),
                    location: d.source.iter().find(|p| p.line > 0).map(|p| p.to_string()),
                }
            });
            location
        });
        resources.set_call_site(location);
        return Some(HostCallTiming {
            start_ns: None,
            stack: Vec::new(),
        });
    }
    let (ids, location) = stack_ids(hook, modules, stack, None, true);
    resources.set_call_site(location);
    Some(HostCallTiming {
        start_ns: Some(hook.profile.now_ns()),
        stack: ids,
    })
}

/// After the host call `timing` began: records its span (a wait for
/// fence and semaphore waits), its time under its stack, and the memory
/// in use when it changed.
pub(crate) fn host_call_ends(
    hooks: &mut super::hooks::Hooks,
    resources: &crate::ContextResources,
    timing: HostCallTiming,
    callee: (u32, u32),
    module: &str,
    function: &str,
) {
    let Some(hook) = hooks.profile.as_mut() else {
        return;
    };
    resources.set_call_site(None);
    let Some(start_ns) = timing.start_ns else {
        return;
    };
    let end = hook.profile.now_ns();
    let ns = end.saturating_sub(start_ns);
    hook.host_ns += ns;
    let profile = &hook.profile;
    let &mut (kind, ids) = hook.host_functions.entry(callee).or_insert_with(|| {
        let kind = if function.ends_with("await") || function.contains("wait") {
            SpanKind::Wait
        } else {
            SpanKind::HostCall
        };
        (
            kind,
            profile.host_function_ids(&format!("{module}.{function}")),
        )
    });
    hook.profile
        .host_call(kind, ids, &timing.stack, start_ns, end);
    let memory = resources.memory_in_use();
    if memory != hook.last_memory {
        hook.last_memory = memory;
        hook.profile.counter("memory in use (bytes)", memory);
    }
}
