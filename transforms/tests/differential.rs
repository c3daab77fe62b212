//! Differential tests: original and manually unrolled kernels, compiled as host C++ with g++,
//! must visit the same induction values in the same order and write bit-identical floats,
//! over many ranges (0, 1, primes, powers of two, large, next to the type limits).
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

mod common;

use common::{pair, run_pairs, unroll_kernel, LoopSpec, Pair, StepSpec, Stmt, TYPES};
use proptest::prelude::*;
use transforms::Mode;

fn base(ty: (&'static str, u32, bool)) -> LoopSpec {
    LoopSpec {
        ty: ty.0,
        bits: ty.1,
        signed: ty.2,
        bound_ty: None,
        up: true,
        inclusive: false,
        var_left: true,
        step: StepSpec::Const(1),
        update_form: 0,
        decl_outside: false,
        empty_init: false,
        thread_offset: false,
        wrap_outer: false,
        body: vec![Stmt::FloatAcc],
        factor: 4,
        template: false,
    }
}

/// Hand-picked shapes: every supported loop shape of the issue, for factors 2, 3, 4 and 8.
#[allow(clippy::vec_init_then_push)]
fn fixed_shapes() -> Vec<(String, LoopSpec)> {
    let int = TYPES[0];
    let uns = TYPES[1];
    let long = TYPES[2];
    let size = TYPES[3];
    let mut v: Vec<(&str, LoopSpec)> = Vec::new();
    v.push(("simple_int", base(int)));
    v.push((
        "inclusive_unsigned",
        LoopSpec {
            inclusive: true,
            ..base(uns)
        },
    ));
    v.push((
        "descending_int",
        LoopSpec {
            up: false,
            step: StepSpec::Const(1),
            ..base(int)
        },
    ));
    v.push((
        "descending_unsigned_ge",
        LoopSpec {
            up: false,
            inclusive: true,
            ..base(uns)
        },
    ));
    v.push((
        "descending_size_t_step3",
        LoopSpec {
            up: false,
            step: StepSpec::Const(3),
            ..base(size)
        },
    ));
    v.push((
        "long_step5_reversed_cmp",
        LoopSpec {
            step: StepSpec::Const(5),
            var_left: false,
            ..base(long)
        },
    ));
    v.push((
        "grid_stride",
        LoopSpec {
            step: StepSpec::GridStride,
            thread_offset: true,
            ..base(int)
        },
    ));
    v.push((
        "grid_stride_size_t",
        LoopSpec {
            step: StepSpec::GridStride,
            thread_offset: true,
            ..base(size)
        },
    ));
    v.push((
        "param_step_int",
        LoopSpec {
            step: StepSpec::Param("int"),
            ..base(int)
        },
    ));
    v.push((
        "param_step_down_unsigned",
        LoopSpec {
            up: false,
            step: StepSpec::Param("unsigned"),
            ..base(uns)
        },
    ));
    v.push((
        "locals_and_continue",
        LoopSpec {
            body: vec![Stmt::Local, Stmt::Continue, Stmt::FloatAcc, Stmt::Store],
            ..base(int)
        },
    ));
    v.push((
        "continue_param_step",
        LoopSpec {
            step: StepSpec::Param("long"),
            body: vec![Stmt::Continue, Stmt::FloatAcc],
            ..base(long)
        },
    ));
    v.push((
        "decl_outside_final_value",
        LoopSpec {
            decl_outside: true,
            step: StepSpec::Const(2),
            ..base(int)
        },
    ));
    v.push((
        "decl_outside_descending",
        LoopSpec {
            decl_outside: true,
            up: false,
            inclusive: true,
            ..base(uns)
        },
    ));
    v.push((
        "empty_init_grid_stride",
        LoopSpec {
            decl_outside: true,
            empty_init: true,
            step: StepSpec::GridStride,
            thread_offset: true,
            ..base(long)
        },
    ));
    v.push((
        "switch_continue_and_macro",
        LoopSpec {
            body: vec![Stmt::SwitchContinue, Stmt::Macro, Stmt::FloatAcc],
            ..base(int)
        },
    ));
    v.push((
        "switch_continue_param_step_down",
        LoopSpec {
            up: false,
            step: StepSpec::Param("unsigned"),
            body: vec![Stmt::Macro, Stmt::SwitchContinue],
            ..base(uns)
        },
    ));
    v.push((
        "outer_with_inner_loop",
        LoopSpec {
            body: vec![Stmt::InnerLoop, Stmt::Continue, Stmt::FloatAcc],
            ..base(int)
        },
    ));
    v.push((
        "inner_of_nest",
        LoopSpec {
            wrap_outer: true,
            body: vec![Stmt::Block, Stmt::FloatAcc],
            ..base(uns)
        },
    ));
    v.push((
        "signed_vs_unsigned_bound",
        LoopSpec {
            bound_ty: Some("unsigned"),
            ..base(int)
        },
    ));
    v.push((
        "signed_vs_size_t_bound_down",
        LoopSpec {
            bound_ty: Some("size_t"),
            up: false,
            ..base(long)
        },
    ));
    v.push((
        "narrow_unsigned_short",
        LoopSpec {
            step: StepSpec::Const(3),
            ..base(TYPES[4])
        },
    ));
    v.push((
        "narrow_short_down",
        LoopSpec {
            up: false,
            inclusive: true,
            ..base(TYPES[5])
        },
    ));
    v.push((
        "template_int",
        LoopSpec {
            template: true,
            step: StepSpec::Const(3),
            ..base(int)
        },
    ));
    v.push((
        "template_size_t_down",
        LoopSpec {
            template: true,
            up: false,
            inclusive: true,
            ..base(size)
        },
    ));
    v.push((
        "template_unsigned_grid_stride",
        LoopSpec {
            template: true,
            step: StepSpec::GridStride,
            thread_offset: true,
            ..base(uns)
        },
    ));
    v.push((
        "template_long_param_step_down",
        LoopSpec {
            template: true,
            up: false,
            step: StepSpec::Param("int"),
            ..base(long)
        },
    ));
    v.push((
        "template_short_decl_outside",
        LoopSpec {
            template: true,
            decl_outside: true,
            ..base(TYPES[5])
        },
    ));
    let mut out = Vec::new();
    for (name, spec) in v {
        for factor in [2, 3, 4, 8] {
            out.push((
                format!("{name}_x{factor}"),
                LoopSpec {
                    factor,
                    ..spec.clone()
                },
            ));
        }
    }
    out
}

#[test]
fn fixed_shapes_all_factors() {
    let pairs: Vec<Pair> = fixed_shapes()
        .iter()
        .map(|(n, s)| pair(s, n).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    let out = run_pairs(&pairs, true).unwrap_or_else(|e| panic!("{e}"));
    assert!(out.contains("failures=0"), "{out}");
    eprintln!("{out}");
}

/// Nested loops unrolled one after the other: the inner loop by 3, then the outer loop (whose
/// body now holds the unrolled inner loop) by 4.
#[test]
fn nested_inner_then_outer() {
    let orig = "__global__ void orig_nest(unsigned long long p_lo, unsigned long long p_hi, unsigned long long p_step, float* out, const float* in) {
    const int lo = (int)p_lo;
    const int hi = (int)p_hi;
    const int k = (int)(p_step % 7);
    float acc = 0.0f;
    for (int i = lo; i < hi; ++i) {
        hu_trace(i);
        for (int j = 0; j < k; ++j) {
            if (j == 1) continue;
            acc = acc * 0.75f + in[hu_slot(i + j)];
        }
        out[hu_slot(i)] += acc;
    }
    out[63] = acc;
}
";
    let inner = unroll_kernel(orig, 1, 3, Mode::Manual, "var_nest", "orig_nest")
        .unwrap_or_else(|e| panic!("{e}"));
    // The inner loop's `continue` became jumps to labels: the outer loop must now refuse.
    let err = unroll_kernel(&inner, 0, 4, Mode::Manual, "var_nest", "var_nest").unwrap_err();
    assert!(err.contains("goto"), "{err}");
    let no_continue = orig.replace("            if (j == 1) continue;\n", "");
    let inner = unroll_kernel(&no_continue, 1, 3, Mode::Manual, "var_nest", "orig_nest")
        .unwrap_or_else(|e| panic!("{e}"));
    let var = unroll_kernel(&inner, 0, 4, Mode::Manual, "var_nest", "var_nest")
        .unwrap_or_else(|e| panic!("{e}"));
    // Outer main loop and remainder, each copy of the body with the inner main and remainder.
    assert_eq!(var.matches("for (").count(), 2 + 5 * 2, "{var}");
    let p = Pair {
        name: "nest".into(),
        orig: no_continue,
        var,
        bits: 32,
        signed: true,
        inst: None,
    };
    let out = run_pairs(&[p], false).unwrap_or_else(|e| panic!("{e}"));
    assert!(out.contains("failures=0"), "{out}");
}

fn stmt() -> impl Strategy<Value = Stmt> {
    prop_oneof![
        Just(Stmt::Local),
        Just(Stmt::Continue),
        Just(Stmt::FloatAcc),
        Just(Stmt::InnerLoop),
        Just(Stmt::Store),
        Just(Stmt::Block),
        Just(Stmt::SwitchContinue),
        Just(Stmt::Macro),
    ]
}

fn spec() -> impl Strategy<Value = LoopSpec> {
    let ty = prop::sample::select(&TYPES[..4]);
    let bound = prop::sample::select(vec![
        None,
        None,
        Some("int"),
        Some("unsigned"),
        Some("long"),
        Some("size_t"),
    ]);
    let step = prop_oneof![
        (1u8..=5).prop_map(StepSpec::Const),
        prop::sample::select(vec!["int", "unsigned", "long", "size_t"]).prop_map(StepSpec::Param),
        Just(StepSpec::GridStride),
    ];
    (
        ty,
        bound,
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        step,
        0u8..4,
        (
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            prop::bool::weighted(0.25),
        ),
        prop::collection::vec(stmt(), 1..5),
        prop::sample::select(vec![2u32, 3, 4, 8]),
    )
        .prop_map(
            |(
                ty,
                bound_ty,
                up,
                inclusive,
                var_left,
                step,
                update_form,
                (decl_outside, empty_init, thread_offset, wrap_outer, template),
                mut body,
                factor,
            )| {
                body.sort_by_key(|s| *s as u8);
                body.dedup();
                let step = if !up && step == StepSpec::GridStride {
                    StepSpec::Const(2)
                } else {
                    step
                };
                LoopSpec {
                    ty: ty.0,
                    bits: ty.1,
                    signed: ty.2,
                    bound_ty,
                    up,
                    inclusive,
                    var_left,
                    step,
                    update_form,
                    decl_outside,
                    empty_init,
                    thread_offset,
                    wrap_outer,
                    body,
                    factor,
                    template,
                }
            },
        )
}

proptest! {
    // Each case compiles ONE C++ file holding all its loops: few, large g++ runs.
    #![proptest_config(ProptestConfig { cases: 3, max_shrink_iters: 20, ..ProptestConfig::default() })]
    #[test]
    fn random_loops(specs in prop::collection::vec(spec(), 40)) {
        let mut pairs = Vec::new();
        for (i, s) in specs.iter().enumerate() {
            let p = pair(s, &format!("r{i}"));
            prop_assert!(p.is_ok(), "{}", p.err().unwrap());
            pairs.push(p.unwrap());
        }
        let out = run_pairs(&pairs, false);
        prop_assert!(out.is_ok(), "{}\n{:#?}", out.err().unwrap(), specs);
    }
}
