// hip-unroll's float math for the clang fallback (no libdevice on a machine without the CUDA
// toolkit): the usual range reductions and series, written here, on top of PTX's ex2.approx
// and correctly rounded +, *, /, fma and sqrt. Accuracy (measured on the host against glibc by
// runner's tests, with exp2f standing in for ex2.approx): expf/exp10f/sinf/cosf within a few
// ulp, logf/log2f/log10f within 2 ulp, tanhf/sinhf/coshf within a few ulp, powf in double
// precision. nvcc's libdevice differs in the last bits; sinf/cosf lose accuracy past |x| ~ 1e5.
// Included by hip_unroll_cuda_prelude.h; the host test defines __HU_M and __HU_EX2 itself.
#ifndef HIP_UNROLL_CUDA_MATH_H
#define HIP_UNROLL_CUDA_MATH_H

#ifndef __HU_M
#define __HU_M static __device__ __forceinline__
#define __HU_EX2(x) __nvvm_ex2_approx_f(x)
#endif

// 2^n * p for n in [-150, 128], in two exact steps and one rounding.
__HU_M float __hu_scale(float p, int n) {
  int n1 = n >> 1, n2 = n - n1;
  return p * __builtin_bit_cast(float, (n1 + 127) << 23) *
         __builtin_bit_cast(float, (n2 + 127) << 23);
}

// e^x = 2^(x log2 e): n = rint(x log2 e), 2^(x log2 e - n) by ex2.approx, scaled by 2^n.
__HU_M float __hu_exp_base(float x, float hi, float lo, float over, float under) {
  if (__builtin_isnan(x)) return x + x;
  if (x > over) return __builtin_inff();
  if (x < under) return 0.0f;
  float n = __builtin_rintf(x * hi);
  float f = __builtin_fmaf(x, hi, -n);
  f = __builtin_fmaf(x, lo, f);
  return __hu_scale(__HU_EX2(f), (int)n);
}
__HU_M float expf(float x) {
  return __hu_exp_base(x, 1.44269502162933349609375f, 1.925963033500011e-8f,
                       88.72283935546875f, -103.97208404541015625f);
}
__HU_M float exp10f(float x) {
  return __hu_exp_base(x, 3.3219280242919921875f, 7.05953130281005e-8f, 38.53183746337890625f,
                       -45.15449905395507812f);
}
__HU_M float exp2f(float x) { return __HU_EX2(x); }

// log x = e ln 2 + log m, m in [sqrt(1/2), sqrt(2)), log m = 2 atanh(s), s = (m - 1) / (m + 1).
// Returns log m; `e` gets the exponent. x must be positive and finite.
__HU_M float __hu_log_parts(float x, int* e) {
  int k = 0;
  if (x < 1.17549435e-38f) {
    x *= 8388608.0f;
    k = -23;
  }
  int bits = __builtin_bit_cast(int, x);
  k += ((bits >> 23) & 0xff) - 127;
  float m = __builtin_bit_cast(float, (bits & 0x007fffff) | 0x3f800000);
  if (m > 1.41421356f) {
    m *= 0.5f;
    k += 1;
  }
  // s = f / (2 + f), f = m - 1 exact; its rounding error s_lo from an exact residual.
  float f = m - 1.0f;
  float u = 2.0f + f;
  float u_lo = (2.0f - u) + f;
  float s = f / u;
  float s_lo = (__builtin_fmaf(-s, u, f) - s * u_lo) / u;
  float z = s * s;
  float p = 1.0f / 11.0f;
  p = __builtin_fmaf(p, z, 1.0f / 9.0f);
  p = __builtin_fmaf(p, z, 1.0f / 7.0f);
  p = __builtin_fmaf(p, z, 1.0f / 5.0f);
  p = __builtin_fmaf(p, z, 1.0f / 3.0f);
  float s2 = 2.0f * s;
  *e = k;
  return s2 + __builtin_fmaf(s2 * z, p, 2.0f * s_lo);
}
// NaN, negative, zero and infinity, as C's log; 0 when x is an ordinary positive number.
__HU_M int __hu_log_special(float x, float* r) {
  if (__builtin_isnan(x)) { *r = x + x; return 1; }
  if (x < 0.0f) { *r = __builtin_nanf(""); return 1; }
  if (x == 0.0f) { *r = -__builtin_inff(); return 1; }
  if (__builtin_isinf(x)) { *r = x; return 1; }
  return 0;
}
__HU_M float logf(float x) {
  float r;
  if (__hu_log_special(x, &r)) return r;
  int e;
  float lm = __hu_log_parts(x, &e);
  // ln 2 = LN2_HI + LN2_LO, LN2_HI with few bits: e * LN2_HI is exact.
  return __builtin_fmaf((float)e, 0.693145751953125f, __builtin_fmaf((float)e, 1.428606765330187e-06f, lm));
}
__HU_M float log2f(float x) {
  float r;
  if (__hu_log_special(x, &r)) return r;
  int e;
  float lm = __hu_log_parts(x, &e);
  return __builtin_fmaf(lm, 1.44269502162933349609375f,
                        __builtin_fmaf(lm, 1.925963033500011e-8f, (float)e));
}
__HU_M float log10f(float x) {
  float r;
  if (__hu_log_special(x, &r)) return r;
  int e;
  float lm = __hu_log_parts(x, &e);
  // log10 x = e log10 2 + log m log10 e.
  float t = __builtin_fmaf(lm, 0.4342944819032518f, (float)e * 4.605038981195214e-06f);
  return __builtin_fmaf((float)e, 0.30102539062500000f, t);
}

// powf in double precision: 2^(y log2 x), log2 and 2^f by series.
__HU_M double __hu_log2_d(double x) {
  long long bits = __builtin_bit_cast(long long, x);
  int k = (int)((bits >> 52) & 0x7ff) - 1023;
  double m = __builtin_bit_cast(double, (bits & 0x000fffffffffffffLL) | 0x3ff0000000000000LL);
  if (m > 1.4142135623730951) {
    m *= 0.5;
    k += 1;
  }
  double s = (m - 1.0) / (m + 1.0);
  double z = s * s;
  double p = 1.0 / 25.0;
  for (int i = 11; i >= 1; --i) p = __builtin_fma(p, z, 1.0 / (2 * i + 1));
  // p = 1/3 + z/5 + ... + z^11/25; log m = 2s + 2s z p
  double lm = __builtin_fma(2.0 * s * z, p, 2.0 * s);
  return __builtin_fma(lm, 1.4426950408889634, (double)k);
}
__HU_M double __hu_exp2_d(double t) {
  double n = __builtin_rint(t);
  double f = (t - n) * 0.6931471805599453;
  double p = 1.0 / 87178291200.0;  // 1/14!
  double fact = 87178291200.0;
  for (int i = 13; i >= 0; --i) {
    fact /= (i + 1);
    p = __builtin_fma(p, f, 1.0 / fact);
  }
  return p * __builtin_bit_cast(double, (long long)((int)n + 1023) << 52);
}
__HU_M float powf(float x, float y) {
  if (y == 0.0f || x == 1.0f) return 1.0f;
  if (__builtin_isnan(x) || __builtin_isnan(y)) return x + y;
  float sign = 1.0f;
  float yi = __builtin_truncf(y);
  bool odd = yi == y && __builtin_fabsf(y) < 16777216.0f && ((long long)yi & 1);
  if (x < 0.0f) {
    if (yi != y && !__builtin_isinf(y)) return __builtin_nanf("");
    if (odd) sign = -1.0f;
    x = -x;
  }
  if (x == 0.0f) return sign * (y < 0.0f ? __builtin_inff() : 0.0f);
  if (__builtin_isinf(x)) return sign * (y < 0.0f ? 0.0f : __builtin_inff());
  if (__builtin_isinf(y)) {
    if (x == 1.0f) return 1.0f;
    return (x < 1.0f) == (y < 0.0f) ? __builtin_inff() : 0.0f;
  }
  double t = (double)y * __hu_log2_d((double)x);
  if (t > 128.5) return sign * __builtin_inff();
  if (t < -151.0) return sign * 0.0f;
  return sign * (float)__hu_exp2_d(t);
}

// sin and cos: x = k pi/2 + r (Cody-Waite, four parts), series on |r| <= pi/4.
__HU_M float __hu_reduce(float x, int* q) {
  float k = __builtin_rintf(x * 0.636619772367581f);
  // pi/2 in four parts, the first three of 11 bits: k * part is exact for |k| < 2^13.
  float r = __builtin_fmaf(-k, 1.5703125f, x);
  r = __builtin_fmaf(-k, 4.837512969970703125e-4f, r);
  r = __builtin_fmaf(-k, 7.549533620476723e-08f, r);
  r = __builtin_fmaf(-k, 2.5633440682570896e-12f, r);
  *q = (int)(long long)k & 3;
  return r;
}
__HU_M float __hu_sin_poly(float r) {
  float z = r * r;
  float p = 1.0f / 362880.0f;
  p = __builtin_fmaf(p, z, -1.0f / 5040.0f);
  p = __builtin_fmaf(p, z, 1.0f / 120.0f);
  p = __builtin_fmaf(p, z, -1.0f / 6.0f);
  return __builtin_fmaf(r * z, p, r);
}
__HU_M float __hu_cos_poly(float r) {
  float z = r * r;
  float p = -1.0f / 3628800.0f;
  p = __builtin_fmaf(p, z, 1.0f / 40320.0f);
  p = __builtin_fmaf(p, z, -1.0f / 720.0f);
  p = __builtin_fmaf(p, z, 1.0f / 24.0f);
  p = __builtin_fmaf(p, z, -0.5f);
  return __builtin_fmaf(z, p, 1.0f);
}
__HU_M float sinf(float x) {
  if (__builtin_isinf(x)) return __builtin_nanf("");
  int q;
  float r = __hu_reduce(x, &q);
  float v = (q & 1) ? __hu_cos_poly(r) : __hu_sin_poly(r);
  return (q & 2) ? -v : v;
}
__HU_M float cosf(float x) {
  if (__builtin_isinf(x)) return __builtin_nanf("");
  int q;
  float r = __hu_reduce(x, &q);
  float v = (q & 1) ? __hu_sin_poly(r) : __hu_cos_poly(r);
  return ((q + 1) & 2) ? -v : v;
}
__HU_M float tanf(float x) {
  if (__builtin_isinf(x)) return __builtin_nanf("");
  int q;
  float r = __hu_reduce(x, &q);
  float s = __hu_sin_poly(r), c = __hu_cos_poly(r);
  return (q & 1) ? -c / s : s / c;
}

// Hyperbolic functions from expf; series where e^x - e^-x cancels.
__HU_M float tanhf(float x) {
  float a = __builtin_fabsf(x);
  if (__builtin_isnan(x)) return x + x;
  float t;
  if (a < 0.55f) {
    float z = x * x;
    float p = 0.0002392e0f;  // 443861162/1856156927625
    p = __builtin_fmaf(p, z, -0.0005900274f);
    p = __builtin_fmaf(p, z, 0.0014558344f);
    p = __builtin_fmaf(p, z, -0.0035921280f);
    p = __builtin_fmaf(p, z, 0.0088632355f);
    p = __builtin_fmaf(p, z, -0.0218694885f);
    p = __builtin_fmaf(p, z, 0.0539682540f);
    p = __builtin_fmaf(p, z, -0.1333333333f);
    p = __builtin_fmaf(p, z, 0.3333333333f);
    return __builtin_fmaf(-x * z, p, x);
  }
  if (a < 9.01091289520263671875f) {
    t = 1.0f - 2.0f / (expf(2.0f * a) + 1.0f);
  } else {
    t = 1.0f;
  }
  return __builtin_copysignf(t, x);
}
__HU_M float sinhf(float x) {
  float a = __builtin_fabsf(x);
  if (a < 0.5f) {
    float z = x * x;
    float p = 1.0f / 39916800.0f;
    p = __builtin_fmaf(p, z, 1.0f / 362880.0f);
    p = __builtin_fmaf(p, z, 1.0f / 5040.0f);
    p = __builtin_fmaf(p, z, 1.0f / 120.0f);
    p = __builtin_fmaf(p, z, 1.0f / 6.0f);
    return __builtin_fmaf(x * z, p, x);
  }
  float v;
  if (a < 88.72283935546875f) {
    float e = expf(a);
    v = 0.5f * e - 0.5f / e;
  } else {
    float h = expf(0.5f * a);
    v = (0.5f * h) * h;
  }
  return __builtin_copysignf(v, x);
}
__HU_M float coshf(float x) {
  float a = __builtin_fabsf(x);
  if (__builtin_isnan(x)) return x + x;
  if (a < 88.72283935546875f) {
    float e = expf(a);
    return 0.5f * e + 0.5f / e;
  }
  float h = expf(0.5f * a);
  return (0.5f * h) * h;
}

#endif  // HIP_UNROLL_CUDA_MATH_H
