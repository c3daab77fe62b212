//! insta snapshots of the whole IR (spans included) for rich inputs: any change in lowering shows
//! up as a reviewed diff (`cargo insta review`).

use frontend::parse;

#[test]
fn ir_of_a_rich_kernel() {
    let src = r#"#define TILE 16
#define SYNC() __syncthreads()
extern __shared__ float smem[];
namespace ns {
template <typename T>
__global__ void __launch_bounds__(256) k(T* out, const T* in, int n) {
  __shared__ T tile[TILE];
  float* row = smem + threadIdx.x;  // alias of dynamic LDS
  #pragma unroll 4
  for (int i = 0; i < 16; i += 2) {
    tile[i % TILE] = in[i];
    SYNC();
    for (int j = n; j > 0; --j) { if (j == 3) break; row[j] = 0; }
  }
  while (n-- > 0) { auto f = [&](int x) { return x + 1; }; out[n] = f(n); }
  do { atomicAdd(&out[0], T(1)); } while (out[0] < 8);
  if (n < 0) goto done;
done:
  return;
}
}
"#;
    insta::assert_json_snapshot!(parse(src.as_bytes()));
}

#[test]
fn ir_of_the_recovery_fixture() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../testdata/check/frontend/recovery.cu"
    );
    let src = std::fs::read(path).expect("fixture");
    let f = parse(&src);
    // The shape that matters for recovery: every function, its kind, and its loops.
    let summary: Vec<String> = f
        .functions
        .iter()
        .map(|x| {
            let loops: Vec<String> = x
                .loops
                .iter()
                .map(|l| {
                    format!(
                        "{:?}@{}:{} trip={:?}",
                        l.kind, l.keyword.line, l.keyword.column, l.trip_count
                    )
                })
                .collect();
            format!(
                "{} {:?} line={} recovered={} macro={:?} loops=[{}]",
                x.qualified_name,
                x.kind,
                x.name_span.line,
                x.recovered,
                x.qualifier_macro,
                loops.join(", ")
            )
        })
        .collect();
    insta::assert_debug_snapshot!(summary);
}
