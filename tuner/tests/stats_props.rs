//! Properties of the decision rule on arbitrary samples: it depends on ratios only (scaling
//! every figure changes nothing), swapping the two sides inverts the estimate, an accept always
//! meets both conditions, and making the variant faster never raises the p-value.

use proptest::prelude::*;
use tuner::stats::{assess, signed_rank_p_less, Pair, Plan, Verdict};

fn pairs_strategy() -> impl Strategy<Value = Vec<(f64, f64)>> {
    prop::collection::vec((0.5f64..2.0, 0.5f64..2.0), 1..40)
}

fn pairs(v: &[(f64, f64)]) -> Vec<Pair> {
    v.iter()
        .enumerate()
        .map(|(i, (b, x))| Pair {
            baseline: *b,
            variant: *x,
            baseline_first: i % 2 == 0,
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn scale_invariant(v in pairs_strategy(), k in 0.01f64..100.0) {
        let plan = Plan::default();
        let a = assess(&pairs(&v), &plan);
        let scaled: Vec<(f64, f64)> = v.iter().map(|(b, x)| (b * k, x * k)).collect();
        let b = assess(&pairs(&scaled), &plan);
        prop_assert_eq!(a.verdict, b.verdict);
        prop_assert!((a.speedup - b.speedup).abs() < 1e-9 * a.speedup.max(1.0));
        prop_assert!((a.p_value - b.p_value).abs() < 1e-9);
    }

    #[test]
    fn swapping_sides_inverts_the_estimate(v in pairs_strategy()) {
        let plan = Plan::default();
        let a = assess(&pairs(&v), &plan);
        let swapped: Vec<(f64, f64)> = v.iter().map(|(b, x)| (*x, *b)).collect();
        let b = assess(&pairs(&swapped), &plan);
        prop_assert!((a.speedup * b.speedup - 1.0).abs() < 1e-9);
    }

    #[test]
    fn accept_meets_both_conditions(v in pairs_strategy(), shift in 0.0f64..0.5) {
        let plan = Plan::default();
        let faster: Vec<(f64, f64)> = v.iter().map(|(b, x)| (*b, x * (1.0 - shift))).collect();
        let a = assess(&pairs(&faster), &plan);
        if a.verdict == Verdict::Accept {
            prop_assert!(a.p_value <= plan.alpha_per_look());
            prop_assert!(a.speedup >= 1.0 + plan.min_speedup);
            prop_assert!(plan.looks().contains(&a.n) || a.n >= plan.max_runs);
        }
    }

    #[test]
    fn a_faster_variant_never_raises_p(d in prop::collection::vec(-1.0f64..1.0, 1..40), i in 0usize..40, by in 0.0f64..1.0) {
        let i = i % d.len();
        let mut e = d.clone();
        e[i] -= by;
        prop_assert!(signed_rank_p_less(&e) <= signed_rank_p_less(&d) + 1e-12);
    }
}
