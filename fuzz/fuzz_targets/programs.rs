//! Valid programs (two linked modules, lists, nesting, yields; see
//! `gen_program.rs`) run twice: on the plain dispatch loop and on the
//! hooked loop (fuel, deadline, interrupt flag and an observer attached,
//! none of which may stop it). Both must end the same way: the same results
//! or the same trap. Then once more with a small fuel budget, which must
//! end in the same way or in RESOURCE_EXHAUSTED. Never a panic.
#![no_main]

mod gen_program;

use irvm::{
    Context, Control, ExecView, Limits, Module, Observer, Ref, StatusCode, TypeRegistry, Value,
};
use libfuzzer_sys::arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;

struct Counting(u64);

impl Observer for Counting {
    fn before_instruction(&mut self, view: &ExecView<'_>) -> Control {
        self.0 += 1;
        // Touch what a debugger reads.
        let _ = view.i32_registers().len() + view.ref_registers().len();
        Control::Continue
    }
}

fn context(lib: &[u8], app: &[u8]) -> Context {
    let registry = TypeRegistry::new();
    let mut ctx = Context::new(&registry);
    ctx.set_limits(Limits {
        max_buffer_bytes: 1 << 16,
        max_list_elements: 1 << 12,
        ..Limits::default()
    });
    for (name, bytes) in [("lib", lib), ("app", app)] {
        let module = Module::from_bytes(bytes.to_vec())
            .unwrap_or_else(|e| panic!("generated module {name} does not load: {e}"));
        ctx.register_module(module)
            .unwrap_or_else(|e| panic!("generated module {name} does not register: {e}"));
    }
    ctx
}

/// An outcome as comparable text.
fn outcome(r: &Result<Vec<Value>, irvm::Trap>) -> String {
    match r {
        Ok(v) => v.iter().map(|v| format!("{v}; ")).collect(),
        Err(t) => format!("trap {t}"),
    }
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(program) = gen_program::generate(&mut u, false) else {
        return;
    };
    let assemble = |text: &str, file: &str| {
        irvm::asm::assemble(text, file)
            .unwrap_or_else(|e| panic!("generated program does not assemble:\n{e}\n{text}"))
    };
    if std::env::var_os("IRVM_FUZZ_PRINT").is_some() {
        eprintln!("{}\n{}", program.lib, program.app);
    }
    let lib = assemble(&program.lib, "lib.vmasm");
    let app = assemble(&program.app, "app.vmasm");
    let mut plain = context(&lib, &app);
    let mut hooked = context(&lib, &app);
    hooked.set_fuel(Some(u64::MAX));
    hooked.set_deadline(Some(
        std::time::Instant::now() + std::time::Duration::from_secs(3600),
    ));
    let _interrupt = hooked.interrupt_handle();
    hooked.set_observer(Some(Box::new(Counting(0))));
    let mut starved = context(&lib, &app);
    // Once a starved call stops half-way, its globals differ from the
    // others': compare no further.
    let mut starved_diverged = false;
    for (name, sig) in &program.app_exports {
        let mut args: Vec<Value> = (0..sig.i32_args)
            .map(|k| Value::I32(k as i32 * 3 - 1))
            .collect();
        args.extend((0..sig.ref_args).map(|_| Value::Ref(Ref::Null)));
        let f = plain.function(&format!("app.{name}")).expect("export");
        let a = plain.invoke(&f, &args);
        let f = hooked.function(&format!("app.{name}")).expect("export");
        let b = hooked.invoke(&f, &args);
        assert_eq!(
            outcome(&a),
            outcome(&b),
            "plain and hooked loops differ on {name}\n{}\n{}",
            program.lib,
            program.app
        );
        if starved_diverged {
            continue;
        }
        let f = starved.function(&format!("app.{name}")).expect("export");
        starved.set_fuel(Some(u.arbitrary::<u16>().unwrap_or(0) as u64));
        let c = starved.invoke(&f, &args);
        if outcome(&a) == outcome(&c) {
            continue;
        }
        if let Err(t) = &c {
            if t.code == StatusCode::ResourceExhausted && t.message.contains("fuel") {
                starved_diverged = true;
                continue;
            }
        }
        assert_eq!(
            outcome(&a),
            outcome(&c),
            "fuel changed the outcome of {name}\n{}\n{}",
            program.lib,
            program.app
        );
    }
});
