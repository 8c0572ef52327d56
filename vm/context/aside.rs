//! Calls made while another call is paused (a debugger's `call f(1, 2)`
//! and `print f(1, 2)`): the paused call's stack is set aside, the call
//! runs to its end on a stack of its own, and the paused call's stack comes
//! back as it was.
//!
//! Sound because a paused call holds nothing of the loops but its stack:
//! it is paused only between instructions, after `dispatch::run` returned
//! (its buffer leases went back with the run's `RunGuard`, compiled code
//! left no native frame, its frame records are in its frame vector); its
//! frames point at functions the context owns (`exec::FuncRef`), which the
//! call aside cannot remove; the refs in its registers stay counted while
//! they are set aside, so the cycle collector sees them as outside holders.
//! The call aside shares the context's limits, fuel, deadline and memory
//! budget (its stack is charged while it lives), as gdb's calls share the
//! process: its frames count on top of the paused call's against the
//! stack's depth and bytes, as if it ran above them.

use crate::exec::Stack;
use crate::func::{Func, FuncTarget, LookupError};
use crate::trap::{StatusCode, Trap};
use crate::values::Value;

use super::{CallState, Context, Registered};

impl Context {
    /// Runs `func(args)` to its end while a call is paused or yielded (or
    /// none is): the paused call's frames are set aside and come back as
    /// they were, whatever the call does. Observers see its instructions,
    /// as any call's; a pause (an observer's, the pause flag, also while a
    /// host call it made defers) abandons it
    /// (CANCELLED, `the call was paused and abandoned`), as does a trap,
    /// which it returns. While the paused call waits in a host call that
    /// yields, the call may not enter that host module (FAILED_PRECONDITION:
    /// a module may keep its suspended call's state per context, which the
    /// entry would disturb). The frames of a trap are not kept for
    /// [`Context::take_trap_frames`] (they are the call's, not the paused
    /// one's).
    pub fn invoke_aside(&mut self, func: &Func, args: &[Value]) -> Result<Vec<Value>, Trap> {
        let mut fresh = Stack::with_budget(&self.memory);
        fresh.block_host(self.stack.waiting_host());
        let paused = std::mem::replace(&mut self.stack, fresh);
        let quietly = std::mem::take(&mut self.hooks.resume_quietly);
        let kept_frames = self.trap_frames.take();
        // The stack left above the paused frames.
        let limits = self.limits;
        let (depth, bytes) = paused.depth_and_bytes();
        self.limits.max_stack_depth = limits.max_stack_depth.saturating_sub(depth);
        self.limits.max_stack_bytes = limits.max_stack_bytes.saturating_sub(bytes);
        let result = self.run_aside(func, args);
        // (The call's stack is released here: cleared on every path.)
        self.stack = paused;
        self.limits = limits;
        self.hooks.resume_quietly = quietly;
        self.trap_frames = kept_frames;
        result
    }

    fn run_aside(&mut self, func: &Func, args: &[Value]) -> Result<Vec<Value>, Trap> {
        let mut state = self.begin_call(func, args)?;
        loop {
            match state {
                CallState::Done(values) => return Ok(values),
                // No instruction runs between a deferring host call's
                // resumptions, so the loops never read the pause flag
                // there: it is read here, or a host that keeps deferring
                // would keep the call (and the debugger) from pausing.
                CallState::Yielded if !self.take_pause() => state = self.resume()?,
                CallState::Yielded | CallState::Paused => {
                    self.abandon();
                    return Err(Trap::new(
                        StatusCode::Cancelled,
                        format!("the call of {} was paused and abandoned", func.name()),
                    ));
                }
            }
        }
    }

    /// Whether a pause was asked for (the pause flag raised), taking it.
    fn take_pause(&self) -> bool {
        self.hooks
            .pause
            .as_ref()
            .is_some_and(|p| p.swap(false, std::sync::atomic::Ordering::Relaxed))
    }

    /// Internal function `ordinal` of the bytecode module at `module_index`
    /// (its place in the context, as [`crate::FrameInfo::module_index`]
    /// gives it: of several modules of one name, any one), exported or
    /// not, to call (a debugger calls any function of the program, as gdb
    /// does).
    pub fn function_at(&self, module_index: usize, ordinal: u32) -> Result<Func, LookupError> {
        // The module at that place, never a later one of the same name
        // (which a lookup by name would find).
        let not_found = |module: Option<&str>, functions: Vec<String>| LookupError::NoFunctionAt {
            module_index,
            module: module.map(str::to_string),
            ordinal,
            functions,
        };
        let b = match self.modules.get(module_index) {
            Some(Registered::Bytecode(b)) => b,
            Some(Registered::Host(h)) => return Err(not_found(Some(&h.name), Vec::new())),
            None => return Err(not_found(None, Vec::new())),
        };
        let sig = b.signatures.get(ordinal as usize).ok_or_else(|| {
            let functions = (0..b.signatures.len() as u32)
                .map(|k| format!("{k} {}", super::function_name(b, k)))
                .collect();
            not_found(Some(&b.name), functions)
        })?;
        let frame = super::describe_frame(&self.modules, module_index as u32, ordinal, 0);
        Ok(Func::new(
            self.id,
            FuncTarget::Bytecode {
                module: module_index as u32,
                ordinal,
            },
            format!("{}.{}", b.name, frame.function),
            sig.clone(),
        ))
    }
}

#[cfg(all(test, feature = "asm"))]
mod tests {
    use crate::{
        CallState, Context, Control, ExecView, Module, Observer, StatusCode, TypeRegistry, Value,
    };

    const PROGRAM: &str = r#"
vm.module @m version 0
vm.func @twice(%i0: i32) -> (i32) {
^bb0:
  %i1 = vm.add.i32 %i0, %i0
  vm.return %i1
}
vm.func @divide(%i0: i32, %i1: i32) -> (i32) {
^bb0:
  %i2 = vm.div.i32.s %i0, %i1
  vm.return %i2
}
vm.export @main
vm.func @main(%i0: i32) -> (i32) {
^bb0:
  %i1 = vm.call @m:0(%i0)
  %i2 = vm.const.i32 1
  %i3 = vm.add.i32 %i1, %i2
  vm.return %i3
}
"#;

    struct EveryInstruction;
    impl Observer for EveryInstruction {
        fn before_instruction(&mut self, _: &ExecView<'_>) -> Control {
            Control::Pause
        }
    }

    /// Paused in `twice(5)`, called from `main`.
    fn paused() -> Context {
        let mut ctx = Context::new(&TypeRegistry::new());
        ctx.register_module(Module::from_assembly(PROGRAM, "m.vmasm").expect("assembles"))
            .expect("registers");
        let main = ctx.function("m.main").expect("main");
        ctx.set_observer(Some(Box::new(EveryInstruction)));
        assert!(matches!(
            ctx.begin_call(&main, &[Value::I32(5)]),
            Ok(CallState::Paused)
        ));
        assert!(matches!(ctx.resume(), Ok(CallState::Paused)));
        ctx.set_observer(None);
        ctx
    }

    fn finish(ctx: &mut Context) -> i32 {
        match ctx.resume() {
            Ok(CallState::Done(v)) => v[0].as_i32().expect("i32"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_call_aside_leaves_the_paused_call_as_it_was() {
        let mut ctx = paused();
        let before: Vec<String> = ctx.frames().iter().map(|f| f.frame.to_string()).collect();
        let twice = ctx.function_at(0, 0).expect("an internal function");
        assert_eq!(twice.name(), "m.fn0");
        let got = ctx.invoke_aside(&twice, &[Value::I32(21)]).expect("runs");
        assert_eq!(got[0].as_i32(), Some(42));
        let after: Vec<String> = ctx.frames().iter().map(|f| f.frame.to_string()).collect();
        assert_eq!(before, after);
        assert_eq!(finish(&mut ctx), 11);
    }

    #[test]
    fn a_call_aside_has_the_stack_above_the_paused_frames() {
        let mut ctx = paused();
        // Two frames paused: one more fits a depth of 3, main's two do not.
        ctx.set_limits(crate::Limits {
            max_stack_depth: 3,
            ..crate::Limits::default()
        });
        let twice = ctx.function_at(0, 0).expect("twice");
        let got = ctx.invoke_aside(&twice, &[Value::I32(2)]).expect("fits");
        assert_eq!(got[0].as_i32(), Some(4));
        let main = ctx.function("m.main").expect("main");
        let e = ctx
            .invoke_aside(&main, &[Value::I32(2)])
            .expect_err("overflows");
        assert_eq!(e.code, StatusCode::ResourceExhausted);
        assert_eq!(ctx.limits().max_stack_depth, 3);
        assert_eq!(finish(&mut ctx), 11);
    }

    #[test]
    fn a_trap_or_a_pause_aside_ends_only_the_call_aside() {
        let mut ctx = paused();
        ctx.keep_trap_frames(true);
        let divide = ctx.function_at(0, 1).expect("divide");
        let e = ctx
            .invoke_aside(&divide, &[Value::I32(1), Value::I32(0)])
            .expect_err("divides by zero");
        assert_eq!(e.code, StatusCode::InvalidArgument);
        assert!(
            ctx.take_trap_frames().is_empty(),
            "the call aside's frames are not kept"
        );
        let wrong = ctx
            .invoke_aside(&divide, &[Value::I32(1)])
            .expect_err("one argument");
        assert_eq!(wrong.code, StatusCode::InvalidArgument);
        ctx.set_observer(Some(Box::new(EveryInstruction)));
        let e = ctx
            .invoke_aside(&divide, &[Value::I32(4), Value::I32(2)])
            .expect_err("paused at once");
        assert_eq!(e.code, StatusCode::Cancelled);
        assert_eq!(e.message, "the call of m.fn1 was paused and abandoned");
        ctx.set_observer(None);
        assert_eq!(ctx.frames().len(), 2);
        assert_eq!(finish(&mut ctx), 11);
        assert!(ctx.function_at(0, 9).is_err());
        assert!(ctx.function_at(7, 0).is_err());
    }

    /// `function_at`'s error names the module it was asked about, by its
    /// place, and that module's own functions, also where a later module
    /// of the same name shadows it (before, it listed the later module's
    /// exports, found by name).
    #[test]
    fn no_function_at_names_the_module_asked_about_and_its_functions() {
        let mut ctx = Context::new(&TypeRegistry::new());
        ctx.register_module(Module::from_assembly(PROGRAM, "m.vmasm").expect("assembles"))
            .expect("registers");
        let later = "vm.module @m version 0\nvm.export @other\nvm.func @other() -> () {\n\
                     ^bb0:\n  vm.return\n}\n";
        ctx.register_module(Module::from_assembly(later, "m2.vmasm").expect("assembles"))
            .expect("registers");
        let e = ctx.function_at(0, 9).expect_err("m has 3 functions");
        assert_eq!(
            e.to_string(),
            "NOT_FOUND; module #0 (`m`) has no function 9; its functions: 0 fn0, 1 fn1, 2 main"
        );
        let e = ctx.function_at(1, 1).expect_err("the later m has 1");
        assert_eq!(
            e.to_string(),
            "NOT_FOUND; module #1 (`m`) has no function 1; its functions: 0 other"
        );
        let e = ctx.function_at(7, 0).expect_err("no module");
        assert_eq!(e.to_string(), "NOT_FOUND; the context has no module #7");
    }

    /// A host function that defers (yields) `left` more times, raising the
    /// pause flag (a Ctrl-C, as the debugger's handler raises it) at its
    /// second resumption, then returns 7.
    struct DefersLong {
        left: u32,
        resumed: u32,
        pause: std::sync::Arc<std::sync::atomic::AtomicBool>,
        /// The resumptions made, for the test to read.
        pause_seen_after: std::sync::Arc<std::sync::atomic::AtomicU32>,
    }

    impl crate::HostState for DefersLong {
        fn call(&mut self, _: usize, _: &[Value]) -> Result<crate::HostOutcome, crate::Trap> {
            Ok(crate::HostOutcome::Deferred)
        }
        fn resume(&mut self, _: usize) -> Result<crate::HostOutcome, crate::Trap> {
            self.resumed += 1;
            self.pause_seen_after
                .store(self.resumed, std::sync::atomic::Ordering::Relaxed);
            if self.resumed == 2 {
                self.pause.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            if self.left == 0 {
                return Ok(crate::HostOutcome::Done(vec![Value::I32(7)]));
            }
            self.left -= 1;
            Ok(crate::HostOutcome::Deferred)
        }
    }

    struct Waiting(
        std::sync::Arc<std::sync::atomic::AtomicBool>,
        std::sync::Arc<std::sync::atomic::AtomicU32>,
    );

    impl crate::HostModule for Waiting {
        fn name(&self) -> &str {
            "waiting"
        }
        fn version(&self) -> u32 {
            1
        }
        fn functions(&self) -> Vec<crate::HostFunctionDecl> {
            vec![crate::HostFunctionDecl {
                name: "wait".into(),
                calling_convention: "0v_i".into(),
            }]
        }
        fn instantiate(&self) -> Result<Box<dyn crate::HostState>, crate::Trap> {
            Ok(Box::new(DefersLong {
                left: 1000,
                resumed: 0,
                pause: self.0.clone(),
                pause_seen_after: self.1.clone(),
            }))
        }
    }

    /// A pause (Ctrl-C) that comes while the call aside waits on a host
    /// call that keeps deferring abandons it, as one that comes while it
    /// runs instructions does: no instruction runs between the host's
    /// resumptions, so the loops never see the flag, and the call went on
    /// until the host was done (forever, for a host that never is).
    #[test]
    fn a_pause_abandons_a_call_aside_waiting_on_a_deferred_host_call() {
        let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let resumed = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
        let mut ctx = Context::new(&TypeRegistry::new());
        ctx.register_host_module(&Waiting(flag.clone(), resumed.clone()))
            .expect("registers");
        let program = r#"
vm.module @w version 0
vm.import @waiting.wait cconv "0v_i"
vm.export @main
vm.func @main() -> (i32) {
^bb0:
  vm.call.yieldable @waiting.wait() -> ^bb1(%i0)
^bb1:
  vm.return %i0
}
"#;
        ctx.register_module(Module::from_assembly(program, "w.vmasm").expect("assembles"))
            .expect("registers");
        ctx.set_pause_flag(Some(flag.clone()));
        let main = ctx.function("w.main").expect("main");
        let e = ctx.invoke_aside(&main, &[]).expect_err("paused");
        assert_eq!(e.code, StatusCode::Cancelled);
        assert_eq!(e.message, "the call of w.main was paused and abandoned");
        assert_eq!(
            resumed.load(std::sync::atomic::Ordering::Relaxed),
            2,
            "abandoned at the first resumption after the pause, not when the host was done"
        );
        assert!(
            !flag.load(std::sync::atomic::Ordering::Relaxed),
            "the pause is taken"
        );
    }
}
