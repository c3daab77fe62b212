//! Property test: the constant trip count of `for (int i = A; i CMP B; i += S)` (written in every
//! supported shape) equals the number of iterations a simulation of the loop runs.

use proptest::prelude::*;

/// Iterations of the loop, or `None` if it runs more than `cap` times (treated as unbounded).
fn simulate(a: i64, b: i64, s: i64, cmp: &str, cap: u64) -> Option<u64> {
    let test = |i: i64| match cmp {
        "<" => i < b,
        "<=" => i <= b,
        ">" => i > b,
        ">=" => i >= b,
        _ => i != b,
    };
    let mut i = a;
    let mut n = 0u64;
    while test(i) {
        n += 1;
        if n > cap {
            return None;
        }
        i += s;
    }
    Some(n)
}

fn update(s: i64, shape: u8) -> String {
    match (shape % 4, s) {
        (0, 1) => "++i".into(),
        (0, -1) => "i--".into(),
        (1, _) if s < 0 => format!("i -= {}", -s),
        (2, _) => format!("i = i + ({s})"),
        _ => format!("i += {s}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    #[test]
    fn trip_count_matches_simulation(
        a in -40i64..40,
        b in -40i64..40,
        s in prop_oneof![-7i64..=-1, 1i64..=7],
        cmp in prop::sample::select(vec!["<", "<=", ">", ">=", "!="]),
        flipped in any::<bool>(),
        shape in any::<u8>(),
    ) {
        // `i < b` may be written `b > i`.
        let cond = if flipped {
            let rev = match cmp { "<" => ">", "<=" => ">=", ">" => "<", ">=" => "<=", _ => "!=" };
            format!("{b} {rev} i")
        } else {
            format!("i {cmp} {b}")
        };
        let src = format!("__global__ void k(int* x) {{ for (int i = {a}; {cond}; {}) x[0] += i; }}", update(s, shape));
        let f = frontend::parse(src.as_bytes());
        let l = &f.functions[0].loops[0];
        prop_assert!(l.header.is_some(), "no canonical header for {src}");
        // A loop that would not stop within 1000 iterations has no constant count here.
        let want = simulate(a, b, s, cmp, 1000);
        prop_assert_eq!(l.trip_count, want, "{}", src);
    }
}
