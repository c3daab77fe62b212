//! Inputs on which the two lexers (the old `#define`-body scanner of `macros.rs` and the tokenizer
//! of `transforms/src/text.rs`) or the two trip-count evaluators (`header.rs` and
//! `transforms::adapter::constant_trip`) disagreed before they became one (`frontend::lex`,
//! `frontend::trip`). Each test states the answer kept and why.

use frontend::trip::{count, int_type_range};
use frontend::*;

fn trip_counts(src: &str) -> Vec<Option<u64>> {
    let f = parse(src.as_bytes());
    f.functions
        .iter()
        .flat_map(|f| f.loops.iter().map(|l| l.trip_count))
        .collect()
}

fn macro_def<'a>(f: &'a SourceFile, name: &str) -> &'a MacroDef {
    f.macros
        .iter()
        .find(|m| m.name == name)
        .unwrap_or_else(|| panic!("no macro {name}"))
}

/// The old comment stripper read the `'` of a digit separator as the start of a character
/// literal, so the comment stayed in the body, `N` was no integer macro and the loop had no
/// count. `1'000` is a C++14 integer literal: the count is 1000.
#[test]
fn digit_separator_before_a_comment_in_a_macro() {
    let src = "#define N 1'000 // count\n\
               __global__ void k(float* x) { for (int i = 0; i < N; ++i) x[i] = 0.f; }\n";
    let f = parse(src.as_bytes());
    assert_eq!(macro_def(&f, "N").body, "1'000");
    assert_eq!(trip_counts(src), vec![Some(1000)]);
}

/// Identifiers may hold UTF-8 letters: the old scanner cut `gain_é` at the first non-ASCII
/// byte and reported `gain_`. A string prefix (`L"..."`) is part of the literal, not a name, and
/// `1e+N` is one preprocessing number (so `N` is no use of a name there).
#[test]
fn macro_body_names_follow_the_lexer() {
    let src = "#define A(v) (gain_\u{e9} * v + scale(L\"x\") + 1e+N)\n";
    let f = parse(src.as_bytes());
    let m = macro_def(&f, "A");
    assert_eq!(m.idents, vec!["gain_\u{e9}".to_string(), "v".to_string()]);
    assert_eq!(m.calls, vec!["scale".to_string()]);
}

/// The frontend counted a `volatile` counter like a plain one (the grammar keeps qualifiers
/// out of the declaration's type). A volatile variable may change behind the loop's back: no
/// constant count.
#[test]
fn volatile_counter_has_no_constant_trip_count() {
    let src = "__global__ void k(float* x) {\n\
               for (volatile int i = 0; i < 4; ++i) x[i] = 0.f;\n\
               for (int i = 0; i < 4; ++i) x[i] = 0.f;\n}\n";
    assert_eq!(trip_counts(src), vec![None, Some(4)]);
    let f = parse(src.as_bytes());
    let h = f.functions[0].loops[0].header.as_ref().expect("canonical");
    assert_eq!(h.var_type.as_deref(), Some("volatile int"));
}

/// `signed long long` had no known range in the frontend (so no overflow check) while the
/// transforms knew it as 64-bit signed: a bound past its maximum is never reached.
#[test]
fn signed_long_long_has_a_range() {
    assert_eq!(
        int_type_range("signed long long"),
        int_type_range("long long")
    );
    let src = "__global__ void k(float* x) {\n\
               for (signed long long i = 0; i < 10000000000000000000; ++i) x[0] = 0.f;\n\
               for (signed long long i = 0; i < 10; ++i) x[i] = 0.f;\n}\n";
    assert_eq!(trip_counts(src), vec![None, Some(10)]);
}

/// A loop whose step goes away from a bound it already fails runs zero times: the frontend said
/// `Some(0)`, the transforms' evaluator `None`. Zero is exact (the condition is false at entry),
/// so it is kept; the transforms refuse such loops earlier (direction mismatch) anyway.
#[test]
fn zero_trip_with_a_step_the_wrong_way() {
    let int = int_type_range("int");
    assert_eq!(count(5, 0, -1, CmpOp::Lt, int), Some(0));
    assert_eq!(count(0, 5, 1, CmpOp::Gt, int), Some(0));
    // Going the wrong way while the condition holds: never ends.
    assert_eq!(count(0, 5, -1, CmpOp::Lt, int), None);
}

/// Distances that overflow `i128` are unknown, never wrapped into a count. (The old evaluator
/// computed `(b - a + s - 1) / s` unchecked: in a release build the first case wrapped to
/// `Some(0)` for a loop that runs once; in a debug build it panicked.)
#[test]
fn overflowing_distances_are_unknown() {
    assert_eq!(count(0, i128::MAX, i128::MAX, CmpOp::Lt, None), None);
    assert_eq!(count(i128::MIN, i128::MAX, 1, CmpOp::Lt, None), None);
    assert_eq!(
        count(i128::MAX, i128::MIN, i128::MIN, CmpOp::Gt, None),
        None
    );
    assert_eq!(count(i128::MIN, 0, i128::MIN, CmpOp::Ne, None), None);
}

/// One integer-type table for the trip counter and the unroller (`frontend::ints`). Plain
/// `char` has implementation-defined sign: the trip counter gave it `signed char`'s range
/// (-128..=127) while the unroller did not know it at all. Now its range is what both signs
/// hold, so a count is given only where the sign does not matter.
#[test]
fn plain_char_has_the_range_both_signs_hold() {
    use frontend::ints::{parse, value_range, IntName, IntType};
    assert_eq!(int_type_range("char"), Some((0, 127)));
    assert_eq!(int_type_range("signed char"), Some((-128, 127)));
    assert_eq!(int_type_range("unsigned char"), Some((0, 255)));
    assert_eq!(IntType::from_text("char"), None);
    assert_eq!(parse("const char").map(|p| p.name), Some(IntName::Char));
    assert_eq!(value_range("std::uint8_t"), Some((0, 255)));
    let src = "__global__ void k(float* x) {\n\
               for (char c = 0; c < 100; ++c) x[c] = 0.f;\n\
               for (char c = 0; c < 200; ++c) x[c] = 0.f;\n\
               for (char c = 10; c > -5; --c) x[0] = 0.f;\n}\n";
    // 200 is never reached by a signed char (the loop does not end); -5 never by an unsigned.
    assert_eq!(trip_counts(src), vec![Some(100), None, None]);
}

/// `volatile` keeps its type's range, but no rewrite may rely on a volatile value: the table
/// reads the qualifier, `from_text` (the unroller's) refuses it, and the trip counter refuses
/// a volatile counter.
#[test]
fn volatile_is_read_by_the_one_table() {
    use frontend::ints::{parse, IntType};
    assert_eq!(int_type_range("volatile int"), int_type_range("int"));
    assert!(parse("volatile unsigned long").is_some_and(|p| p.volatile));
    assert_eq!(IntType::from_text("volatile int"), None);
    assert_eq!(
        IntType::from_text("const unsigned long int"),
        Some(IntType {
            signed: false,
            bits: 64
        })
    );
    // Spellings both old tables missed in one of them: `long int`, `short int`, `signed`.
    for (a, b) in [
        ("long int", "long"),
        ("unsigned short int", "uint16_t"),
        ("signed", "int"),
        ("long long int", "int64_t"),
    ] {
        assert_eq!(IntType::from_text(a), IntType::from_text(b), "{a}");
        assert!(IntType::from_text(a).is_some(), "{a}");
    }
    for not_int in [
        "float",
        "auto",
        "index_t",
        "long double",
        "unsigned float",
        "short long",
    ] {
        assert_eq!(int_type_range(not_int), None, "{not_int}");
    }
}
