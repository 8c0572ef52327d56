//! `irvm dbg` shows floats as gdb 13.1 does, every place one shows: C's
//! `%.9g` for an f32 (gdb's `float`), `%.17g` for an f64 (`double`), `inf`,
//! and NaNs with their sign and mantissa bits (`-nan(0x8000000000000)`).
//! Each expected text is what gdb 13.1 printed for the same value and
//! command on a gcc-built x86-64 C program (`float f = 0.1f; print f`,
//! `x/2fg &arr`, `display/f`, ...). Also the expression corners checked
//! against gdb: hex floats, a NaN cast to an integer, `-0.0`, `long
//! double` literals, and the warning of a shift past its type's width.

use crate::common::paths::{data, repo_file};

/// The reply to each command of `script`: the text after its echoed
/// `(irvm) CMD` line up to the next prompt.
fn replies(args: &[String], script: &str) -> Vec<String> {
    let (text, _) = crate::dbg::dbg(args, script);
    text.split("(irvm) ")
        .skip(1)
        .map(|part| part.split_once('\n').map_or("", |(_, r)| r).to_string())
        .collect()
}

/// `tests/data/dbg/floats.vmasm` with 1.5 for its f32 argument.
fn floats_args() -> Vec<String> {
    vec![
        format!("--module={}", data("dbg/floats.vmasm").display()),
        "--function=main".into(),
        "--input=1.5".into(),
    ]
}

/// x86-64's default NaN (what `0.0/0` gives there), as gdb prints it; the
/// host's arithmetic makes it, in gdb as here.
fn default_nan() -> &'static str {
    if cfg!(any(target_arch = "x86_64", target_arch = "x86")) {
        "-nan(0x8000000000000)"
    } else {
        "nan(0x8000000000000)"
    }
}

/// The registers of a stopped program in `info registers`, `print`,
/// `output`, `display`, a watchpoint's old and new values, `info args`
/// and `/f` (the program's result keeps IREE's `%g`): f32 0.1 is 0.100000001, f64 1.1 is 1.1000000000000001, the
/// NaNs show their bits. Before: `%g` everywhere (0.1, 1.1, nan).
#[test]
fn float_registers_print_as_gdb_prints_them_everywhere() {
    let script = "break main\nrun\nstepi 10\ninfo registers %i0 %i1 %i2:3 %i4 %i8:9 %i11 %i12:13\n\
                  print %i4\noutput %i2:3\necho \\n\ndisplay %i1\ndisplay/f %i10\nwatch %i2:3\n\
                  info args\nprint -%i8:9\nprint %i1 * 3\ncontinue\ncontinue\n";
    let r = replies(&floats_args(), script);
    assert_eq!(
        r[2],
        "main (floats.main+0x00000054)\n=> %i2:3 = vm.add.f64 %i2:3, %i2:3\n"
    );
    assert_eq!(
        r[3],
        "%i0      f32  1.5\n\
         %i1      f32  0.100000001\n\
         %i2:3    f64  1.1000000000000001\n\
         %i4      f32  1.60000002\n\
         %i8:9    f64  -nan(0x8000000000000)\n\
         %i11     f32  nan(0x400000)\n\
         %i12:13  f64  4.9406564584124654e-324\n"
    );
    assert_eq!(r[4], "$1 = 1.60000002\n");
    assert_eq!(r[5], "1.1000000000000001");
    assert_eq!(r[7], "1: %i1 = 0.100000001\n");
    // 0x7fc00000 read as a float.
    assert_eq!(r[8], "2: /f %i10 = nan(0x400000)\n");
    assert_eq!(r[10], "%i0 = 1.5\n");
    // gdb negates as `0 - x`: a NaN keeps its sign.
    assert_eq!(r[11], "$2 = -nan(0x8000000000000)\n");
    // f32 arithmetic stays f32 (gdb: `print f * 3` of a `float`).
    assert_eq!(r[12], "$3 = 0.300000012\n");
    assert_eq!(
        r[13],
        "\nWatchpoint 2: %i2:3\n\nOld value = 1.1000000000000001\nNew value = 2.2000000000000002\n\
         main (floats.main+0x0000005C)\n=> vm.return %i2\n1: %i1 = 0.100000001\n\
         2: /f %i10 = nan(0x400000)\n"
    );
    // The program's results keep IREE's `%g`, as iree-run-module prints
    // them.
    assert_eq!(r[14], "[main returned]\nresult[0]: f64=2.2\n");
}

/// Float constants without a program, each as gdb 13.1 prints `print
/// EXPR` (`print 1.1` is 1.1000000000000001, `print (float)1/3`
/// 0.333333343; gdb's `print -0.0` is 0, as it negates by subtracting
/// from 0).
#[test]
fn float_constants_print_as_gdb_prints_them() {
    let cases: &[(&str, &str)] = &[
        ("print 1.1", "1.1000000000000001"),
        ("print (float)1/3", "0.333333343"),
        ("print (float)16777217", "16777216"),
        ("print 1e300", "1.0000000000000001e+300"),
        ("print 1.0/3", "0.33333333333333331"),
        ("print 100.0", "100"),
        ("print 1e16", "10000000000000000"),
        ("print 1e17", "1e+17"),
        ("print 1e-5", "1.0000000000000001e-05"),
        ("print -0.0", "0"),
        ("print 0.0*-1", "-0"),
        ("print 0.0/0", default_nan()),
        ("print 1.0/0", "inf"),
        ("print -1.0/0", "-inf"),
        ("print 4.9e-324", "4.9406564584124654e-324"),
        ("print (float)1e-45", "1.40129846e-45"),
        ("print (float)1e40", "inf"),
        ("print 1e400", "inf"),
        ("print/f 1.1", "1.1000000000000001"),
        ("print/f 3", "4.20389539e-45"),
        ("print/f (float)1/3", "0.333333343"),
        ("print/x 1.5", "0x3ff8000000000000"),
        // Hex floats, read as C's strtod reads them; a last `f` is the
        // `float` suffix, as gdb takes it.
        ("print 0x1.8p1", "3"),
        ("print 0x1p-2", "0.25"),
        ("print 0X1P3", "8"),
        ("print 0x.8p1", "1"),
        ("print 0x1.8", "1.5"),
        ("print 0x1.8e1", "1.554931640625"),
        ("print 0x1.8f", "1.5"),
        ("print 0x1.fffffep127f", "3.40282347e+38"),
        ("print 0x1e-2", "28"),
        // gdb casts a float to an integer through a `long`, saturating,
        // a NaN to its greatest value: the low 32 bits of
        // 0x7fffffffffffffff are -1 (not x86's cvttsd2si 0x80000000).
        ("print (int)(0.0/0)", "-1"),
        ("print (long)(0.0/0)", "9223372036854775807"),
        ("print (unsigned)(0.0/0)", "4294967295"),
        ("print (unsigned char)(0.0/0)", "255 '\\377'"),
        ("print (int)(1.0/0)", "-1"),
        ("print (int)(-1.0/0)", "0"),
        ("print (unsigned long)1e19", "9223372036854775807"),
        // `/c` takes a float through a `long` too.
        ("print/c 0.0/0", "-1 '\\377'"),
    ];
    let script: String = cases.iter().map(|(c, _)| format!("{c}\n")).collect();
    let r = replies(&floats_args(), &script);
    for (i, (command, want)) in cases.iter().enumerate() {
        assert_eq!(r[i], format!("${} = {want}\n", i + 1), "{command}");
    }
    let r = replies(
        &floats_args(),
        "output 1.1\necho \\n\nwhatis 0x1.8f\nwhatis 0x1p3\nwhatis 1 < 2\nwhatis !1\n\
         print 1.5l\nprint 0x1p\nwhatis 1ll\n\
         printf \"%d %ld %c|\\n\", 0.0/0, 0.0/0, 65.0\n",
    );
    assert_eq!(r[0], "1.1000000000000001");
    assert_eq!(r[2], "type = f32\n");
    assert_eq!(r[3], "type = f64\n");
    // A comparison is C's `int`, as gdb says (and an i32, as the VM's
    // vm.cmp.* give).
    assert_eq!(r[4], "type = i32\n");
    assert_eq!(r[5], "type = i32\n");
    // gdb prints a `long double` to 21 digits (`print 1.1l` is
    // 1.10000000000000000002): an f64 cannot stand in for it.
    assert_eq!(
        r[6],
        "error: cannot print `1.5l`: cannot evaluate `1.5l`: `1.5l` is a long double, which the \
         VM has not (gdb prints one to 21 digits, `1.1l` as 1.10000000000000000002, more than \
         an f64 holds; f32 and f64 are `1.5f` and `1.5`)\n"
    );
    // gdb 13.1 reads floats with glibc's `sscanf`, which takes an
    // exponent mark without digits as no exponent: `print 0x1p` is 1.
    assert_eq!(r[7], "$1 = 1\n");
    // gdb's `long long`, which the VM's i64 stands for as it does for `long`.
    assert_eq!(r[8], "type = i64\n");
    // printf's integer conversions take a float as gdb does, through a
    // `long` (a NaN the greatest).
    assert_eq!(r[9], "-1 9223372036854775807 A|\n");
}

/// A shift by a count at or past its type's width, or negative, prints
/// gdb 13.1's warning on the line before its value (`print`, `output`,
/// `whatis`, `printf`), and before an error the evaluation then meets.
#[test]
fn a_shift_past_the_width_warns_before_its_value() {
    let r = replies(
        &floats_args(),
        "print 1 << 32\nprint 1 << 31\nprint 1 >> 40\nprint -1 >> 40\nprint 1 << -1\n\
         print 1L << 64\nprint (char)1 << 32\noutput 1 << 40\necho \\n\nwhatis 1 << 40\n\
         printf \"%d\\n\", 1u >> 32\nprint (1 << 40) + (2 << 50)\nprint (1 << 40) / 0\n",
    );
    let warned = |direction: &str, value: &str| {
        format!("warning: {direction} shift count >= width of type\n{value}")
    };
    assert_eq!(r[0], warned("left", "$1 = 0\n"));
    assert_eq!(r[1], "$2 = -2147483648\n");
    assert_eq!(r[2], warned("right", "$3 = 0\n"));
    assert_eq!(r[3], warned("right", "$4 = -1\n"));
    assert_eq!(r[4], "warning: left shift count is negative\n$5 = 0\n");
    assert_eq!(r[5], warned("left", "$6 = 0\n"));
    // A `char` is promoted to `int` first.
    assert_eq!(r[6], warned("left", "$7 = 0\n"));
    assert_eq!(r[7], warned("left", "0"));
    assert_eq!(r[9], warned("left", "type = i32\n"));
    assert_eq!(r[10], warned("right", "0\n"));
    assert_eq!(
        r[11],
        format!("{}{}", warned("left", ""), warned("left", "$8 = 0\n"))
    );
    assert_eq!(
        r[12],
        warned(
            "left",
            "error: cannot print `(1 << 40) / 0`: Division by zero\n"
        )
    );
}

/// `x/f` shows a buffer's floats as gdb's `x/2fw` and `x/2fg` do: the
/// f32s 0.1 and 0.2, and the same 16 bytes read as two f64s (gdb 13.1 on
/// `float arr[4] = {0.1f, 0.2f, 3, 4}`).
#[test]
fn x_shows_floats_as_gdb_does() {
    let args = [
        format!("--module={}", repo_file("tests/models/add.vmfb")),
        "--function=add".into(),
        "--input=2x3xf32=0.1,0.2,3,4,5,6".into(),
        "--input=2x3xf32=10".into(),
    ];
    let r = replies(&args, "start\nx/2fw %r0\nx/2fg %r0\n");
    assert_eq!(r[1], "%r0+0x0:\t0.100000001\t0.200000003\n");
    assert_eq!(
        r[2],
        "%r0+0x0:\t1.3411048210842936e-08\t512.00012254714966\n"
    );
}
