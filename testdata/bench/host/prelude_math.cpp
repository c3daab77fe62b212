// The clang fallback's float math (runner/prelude/hip_unroll_cuda_math.h) on the host, against
// glibc in double precision: one line per function and range, `NAME LO HI MAX_ULP AT`. exp2f
// stands in for PTX's ex2.approx, whose own error the GPU adds. Built and run by
// runner/tests/prelude_math.rs with -DHU_MATH_HEADER="path".
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <cstdlib>
namespace hu {
#define __HU_M static inline
#define __HU_EX2(x) ::exp2f(x)
#include HU_MATH_HEADER
}
static double ulps(float got, double want) {
  if (std::isnan(want)) return std::isnan(got) ? 0 : 1e9;
  if (std::isinf(want)) return (std::isinf(got) && (got > 0) == (want > 0)) ? 0 : 1e9;
  float w = (float)want;
  if (std::isinf(w)) { return std::isinf(got) ? 0 : 1e9; }
  double ulp = std::fabs((double)std::nextafter(w, INFINITY) - (double)w);
  if (ulp == 0) ulp = 1e-45;
  return std::fabs((double)got - want) / ulp;
}
static double exp10_ref(double x) { return std::pow(10.0, x); }
static uint64_t st = 88172645463325252ull;
static float rnd(float lo, float hi) { st ^= st << 13; st ^= st >> 7; st ^= st << 17; return lo + (hi - lo) * (float)((st >> 11) * (1.0 / 9007199254740992.0)); }
#define CHECK1(NAME, REF, LO, HI) { double m = 0; float at = 0; for (int i = 0; i < 500000; ++i) { float x = rnd(LO, HI); double u = ulps(hu::NAME(x), REF((double)x)); if (u > m) { m = u; at = x; } } printf("%s %g %g %.3f %.9g\n", #NAME, (double)(LO), (double)(HI), m, at); }
int main() {
  CHECK1(expf, std::exp, -104.0f, 89.0f)
  CHECK1(exp10f, exp10_ref, -46.0f, 39.0f)
  CHECK1(logf, std::log, 0.0f, 4.0f)
  CHECK1(logf, std::log, 0.0f, 3e38f)
  CHECK1(log2f, std::log2, 0.0f, 4.0f)
  CHECK1(log2f, std::log2, 0.0f, 3e38f)
  CHECK1(log10f, std::log10, 0.0f, 4.0f)
  CHECK1(log10f, std::log10, 1e-30f, 3e38f)
  CHECK1(sinf, std::sin, -100.0f, 100.0f)
  CHECK1(cosf, std::cos, -100.0f, 100.0f)
  CHECK1(sinf, std::sin, -1e4f, 1e4f)
  CHECK1(cosf, std::cos, -1e4f, 1e4f)
  CHECK1(tanf, std::tan, -10.0f, 10.0f)
  CHECK1(tanhf, std::tanh, -12.0f, 12.0f)
  CHECK1(tanhf, std::tanh, -1.0f, 1.0f)
  CHECK1(sinhf, std::sinh, -89.0f, 89.0f)
  CHECK1(sinhf, std::sinh, -1.0f, 1.0f)
  CHECK1(coshf, std::cosh, -89.0f, 89.0f)
  { double m = 0; float ax = 0, ay = 0; for (int i = 0; i < 500000; ++i) { float x = rnd(0.0f, 10.0f), y = rnd(-40.0f, 40.0f); double u = ulps(hu::powf(x, y), std::pow((double)x, (double)y)); if (u > m) { m = u; ax = x; ay = y; } } printf("powf 0 10 %.3f %g\n", m, ax); (void)ay; }
  printf("special %g %g %g %g %g %g %g %g\n", hu::expf(INFINITY), hu::expf(-INFINITY), hu::logf(0.0f), hu::logf(-1.0f), hu::powf(-2.0f, 3.0f), hu::powf(-2.0f, 0.5f), hu::tanhf(20.0f), hu::sinf(0.0f));
  return 0;
}
