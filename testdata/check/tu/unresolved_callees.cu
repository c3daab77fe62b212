// `unresolved` lists callees only, each once: never casts (`static_cast`, functional casts
// such as `float(x)`, `uint32_t(x)`, `compute_t(x)`), types (`float4`, a template
// parameter), or variables; a method the receiver's class only declares is unresolved, a
// function of a header that is not there too. Keywords in a macro's body (`if constexpr(...)`,
// `asm(...)`) and a member type of a template parameter named as one (`T::value_type(x)`) are
// no callees either.
typedef float compute_t;
using index_type = int;

struct Counter {
  int* c;
  __device__ void bump();                 // declared, no body visible
  __device__ int get() const { return *c; }
};

__device__ float ext_scale(float v);      // declared, no body visible

#define MAC_STEP(x) \
  do { if constexpr (sizeof(x) == 4) { asm volatile("" : "+v"(x)); } } while (0)

template <class T>
__device__ void scale_all(T* p, int n) {
  for (int i = 0; i < n; ++i) {  // ~ blockers: none
    p[i] = p[i] * typename T::value_type(2) + T::index_t(i);
    MAC_STEP(p[i]);
  }
}

template <class T, class Op>
__device__ T convert_all(T v, Op op) {
  T w = T(v);
  return static_cast<T>(w) + op(w);
}

__global__ void hygiene(float* a, const int* idx, Counter cnt, int n, cudaTextureObject_t tex,
                        cudaSurfaceObject_t surf, curandState rng, rocrand_state_xorwow rng2) {
  nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 16, half, nvcuda::wmma::row_major> frag;
  for (int i = 0; i < n; ++i) {  // ~ blockers: none
    a[i] = static_cast<float>(i) + float(idx[i]) + compute_t(i) + (unsigned)i;
    a[i] += float(uint32_t(idx[i])) + float(index_type(i)) + reinterpret_cast<float*>(a)[0];
    float4 v = make_float4(a[i], 0.f, 0.f, 0.f);
    a[i] += v.x + float(cnt.get());
  }
  for (int i = 0; i < n; ++i) a[i] = convert_all(a[i], [](float x) { return 2.f * x; });  // ~ blockers: none
  for (int i = 0; i < n; ++i) {  // ~ blockers: none
    // The device API's textures, surfaces, random numbers and warp matrix functions are known.
    a[i] += tex2D<float>(tex, i, 0) + curand_uniform(&rng) + rocrand_normal(&rng2);
    surf2Dwrite(a[i], surf, i * 4, 0);
    nvcuda::wmma::load_matrix_sync(frag, a + i, 16);
  }
  for (int i = 0; i < n; ++i) {  // ~ blockers: none
    // The toolkits' 16- and 8-bit float types named as functional casts are no callees.
    a[i] = float(nv_bfloat16(a[i])) + float(nv_half(a[i])) + float(__nv_fp8_e4m3(a[i]));
  }
  for (int i = 0; i < n; ++i) {  // ~ blockers: none
    // Operators written like calls (`noexcept(...)`, `typeid(...)`) are no callees.
    static_assert(noexcept(cnt.get()) || true, "");
    a[i] += float(noexcept(a[i] + 1.f));
  }
  for (int i = 0; i < n; ++i) cnt.bump();  // ~ blockers: none
  // ~^ unresolved: cnt.bump
  for (int i = 0; i < n; ++i) a[i] = ext_scale(a[i]);  // ~ blockers: none
  // ~^ unresolved: ext_scale
  for (int i = 0; i < n; ++i) {  // ~ blockers: none
    // ~^ unresolved: cnt.bump, ext_scale
    cnt.bump();
    a[i] = ext_scale(a[i]) + ext_scale(1.f);
  }
}
