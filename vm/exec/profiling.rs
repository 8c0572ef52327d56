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

/// The frame ids of the stack, outermost first.
fn stack_ids(
    hook: &ProfileHook,
    modules: &[Registered],
    stack: &Stack,
    top_pc: Option<usize>,
    in_call: bool,
) -> Vec<u32> {
    let n = stack.frames.len();
    let mut ids = Vec::with_capacity(n);
    for (k, f) in stack.frames.iter().enumerate() {
        let pc = frame_pc(f, k + 1 == n, top_pc, in_call);
        let offsets = &f.func.offsets;
        let offset = offsets
            .get(pc.min(offsets.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0);
        let key = (hook.context, f.module, f.func.ordinal, offset);
        ids.push(hook.profile.frame_id(key, || {
            let d = describe_frame(modules, f.module, f.func.ordinal, offset);
            SampledFrame {
                function: format!("{}.{}", d.module, d.function),
                // Line 0 is no place (an initializer's recorded command
                // buffers are there): the first enclosing call that has
                // one, else none.
                location: d.source.iter().find(|p| p.line > 0).map(|p| p.to_string()),
            }
        }));
    }
    ids
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
    let ids = stack_ids(hook, modules, stack, top_pc, false);
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
    let ids = stack_ids(hook, modules, stack, None, true);
    let location = ids.last().and_then(|&id| hook.profile.frame_location(id));
    resources.set_call_site(location);
    Some(HostCallTiming {
        start_ns: hook.timed.then(|| hook.profile.now_ns()),
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
    let name = format!("{module}.{function}");
    let kind = if function.ends_with("await") || function.contains("wait") {
        SpanKind::Wait
    } else {
        SpanKind::HostCall
    };
    hook.profile.span(kind, &name, start_ns, end);
    hook.profile.host_sample(&timing.stack, &name, ns);
    let memory = resources.memory_in_use();
    if memory != hook.last_memory {
        hook.last_memory = memory;
        hook.profile.counter("memory in use (bytes)", memory);
    }
}
