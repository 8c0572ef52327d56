//! Cross-checks `vm/bytecode/isa.rs` against IREE's machine-readable ISA description
//! (`../shared/reference/isa.json`, read at run time; skipped when absent):
//! every instruction's set, opcode, mnemonic and operand layout must agree.

use irvm::bytecode::isa::{Access, Bank, Field, ListKind, Opcode, OpcodeSet, INSTRUCTIONS};
use serde_json::Value;

use crate::paths::shared;

fn isa_json() -> Option<Value> {
    let p = shared("reference/isa.json")?;
    let text = std::fs::read_to_string(&p).ok()?;
    serde_json::from_str(&text).ok()
}

fn bank(name: &str) -> Bank {
    match name {
        "i32" => Bank::I32,
        "i64" => Bank::I64,
        "f32" => Bank::F32,
        "f64" => Bank::F64,
        "ref" => Bank::Ref,
        other => panic!("unknown bank {other}"),
    }
}

/// Resolves `$param` references against the encoding's parameters.
fn resolve<'a>(v: &'a str, params: &'a serde_json::Map<String, Value>) -> &'a str {
    match v.strip_prefix('$') {
        Some(p) => params.get(p).and_then(|x| x.as_str()).expect("parameter"),
        None => v,
    }
}

fn to_field(f: &Value, params: &serde_json::Map<String, Value>) -> Field {
    let kind = f["kind"].as_str().unwrap();
    let name = f["name"].as_str().unwrap_or("");
    let access = match f.get("access").and_then(|a| a.as_str()) {
        Some("write") => Access::Write,
        _ => Access::Read,
    };
    let moves = f.get("move").and_then(|m| m.as_str()) == Some("allow");
    let list_kind = || {
        let t = resolve(f["type"].as_str().unwrap(), params);
        if t == "any" {
            ListKind::Any
        } else {
            ListKind::Of(bank(t))
        }
    };
    match kind {
        "register" => {
            let b = bank(resolve(f["bank"].as_str().unwrap(), params));
            if moves {
                Field::RefMove(access)
            } else {
                Field::Reg(b, access)
            }
        }
        "attribute" => Field::Const(bank(resolve(
            f["bank"].as_str().or(f["type"].as_str()).unwrap(),
            params,
        ))),
        "global_attr" => Field::GlobalAttr,
        "func_attr" => Field::FuncAttr,
        "rodata_attr" => Field::RodataAttr,
        "type_of" => Field::TypeId,
        "string_attr" => Field::StringAttr,
        "const_i16" => Field::ConstI16,
        "branch_target" => Field::BranchTarget,
        "branch_operands" => Field::BranchOperands,
        "branch_table_cases" => Field::BranchTableCases,
        "variadic_operands" if name == "segment_sizes" => Field::SegmentSizes,
        "variadic_operands" => Field::Operands(list_kind()),
        "variadic_results" => Field::Results(list_kind()),
        other => panic!("unknown field kind {other}"),
    }
}

#[test]
fn table_matches_reference_isa_json() {
    let Some(isa) = isa_json() else {
        eprintln!("skipping: ../shared/reference/isa.json not present");
        return;
    };
    assert_eq!(isa["bytecode_version"]["major"], 17);
    let classes = isa["operation_classes"].as_object().unwrap();
    let encodings = isa["encodings"].as_object().unwrap();
    let mut checked = 0;
    for inst in isa["instructions"].as_array().unwrap() {
        let Some(mnemonic) = inst["mnemonic"].as_str() else {
            if inst["kind"] == "marker" {
                // The block marker: a field-less instruction in our table.
                let code = inst["opcode"].as_u64().unwrap() as u8;
                let op = Opcode::from_code(OpcodeSet::Core, code).expect("block marker");
                assert!(op.info().fields.is_empty());
                checked += 1;
            }
            continue; // prefix bytes
        };
        let set = match inst["opcode_set"].as_str().unwrap() {
            "core" => OpcodeSet::Core,
            "ext_f32" => OpcodeSet::ExtF32,
            "ext_f64" => OpcodeSet::ExtF64,
            s => panic!("unknown set {s}"),
        };
        let code = inst["opcode"].as_u64().unwrap() as u8;
        let op = Opcode::from_code(set, code).unwrap_or_else(|| panic!("missing {mnemonic}"));
        let info = op.info();
        assert_eq!(info.mnemonic, mnemonic, "opcode {code:#x} in {set:?}");
        let enc = &encodings[inst["encoding"].as_str().unwrap()];
        let (fields, params) = match enc.get("class").and_then(|c| c.as_str()) {
            Some(class) => (
                classes[class]["fields"].as_array().unwrap(),
                enc["parameters"].as_object().unwrap(),
            ),
            None => (enc["fields"].as_array().unwrap(), &serde_json::Map::new()),
        };
        let expected: Vec<Field> = fields.iter().map(|f| to_field(f, params)).collect();
        assert_eq!(info.fields, expected.as_slice(), "fields of vm.{mnemonic}");
        checked += 1;
    }
    // isa.json describes IREE before 3.13; these came with 3.13
    // (`vm.fpowi.*`), checked against its iree-compile and iree-dump-module
    // by tests/mlir/fpowi.mlir (`dump::every_mode_matches_iree_dump_module`
    // and `semantics::fpowi_matches_the_reference_bit_for_bit` in the CLI
    // tests).
    const SINCE_3_13: &[Opcode] = &[Opcode::FPowIF32, Opcode::FPowIF64];
    assert_eq!(
        checked + SINCE_3_13.len(),
        INSTRUCTIONS
            .iter()
            .filter(|i| i.set != OpcodeSet::Internal)
            .count(),
        "every table entry is in isa.json or came with IREE 3.13"
    );
}
