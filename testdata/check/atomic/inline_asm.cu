// Atomics written in inline assembly: PTX `red.*`, `atom.*`; AMDGPU `global_atomic_*`,
// `flat_atomic_*`, `buffer_atomic_*` and LDS atomics (`ds_add_*`, `ds_cmpst_*`); directly, in a
// `__device__` helper, a method, a macro and a lambda. Plain LDS reads and writes, shuffles
// and `redux.sync` are not atomics.
#define RED_ADD(addr, v) asm volatile("red.global.add.f32 [%0], %1;" :: "l"(addr), "f"(v) : "memory")
#define LDS_ADD(addr, v) asm volatile("ds_add_u32 %0, %1" :: "v"(addr), "v"(v) : "memory")
#define LDS_READ(dst, addr) asm volatile("ds_read_b32 %0, %1" : "=v"(dst) : "v"(addr))

__device__ unsigned cas(unsigned* p, unsigned cmp, unsigned v) {
  unsigned old;
  asm volatile("atom.global.cas.b32 %0, [%1], %2, %3;" : "=r"(old) : "l"(p), "r"(cmp), "r"(v));
  return old;
}

struct Histogram {
  unsigned* bins;
  __device__ void add(int b) {
    asm volatile("global_atomic_add_u32 %0, %1, off" :: "v"(&bins[b]), "v"(1u) : "memory");
  }
  __device__ unsigned read(int b) const { return bins[b]; }
};

__global__ void asm_atomics(float* out, unsigned* cnt, unsigned* lds, Histogram h, int n) {
  for (int i = 0; i < n; ++i) {  // ~ blockers: atomic
    asm volatile("red.global.add.u32 [%0], 1;" :: "l"(cnt) : "memory");
  }
  for (int i = 0; i < n; ++i) {  // ~ blockers: atomic
    asm volatile("flat_atomic_cmpswap %0, %1, %2 glc" : "=v"(cnt[i]) : "v"(cnt), "v"(i));
  }
  for (int i = 0; i < n; ++i) {  // ~ blockers: atomic
    asm volatile("buffer_atomic_add %0, %1, %2, 0 offen" :: "v"(i), "v"(i), "s"(cnt));
  }
  for (int i = 0; i < n; ++i) {  // ~ blockers: atomic
    asm volatile("ds_cmpst_rtn_b32 %0, %1, %2, %3" : "=v"(lds[i]) : "v"(lds), "v"(0), "v"(i));
  }
  for (int i = 0; i < n; ++i) cnt[0] = cas(cnt, 0u, 1u);  // ~ blockers: atomic
  for (int i = 0; i < n; ++i) h.add(i);  // ~ blockers: atomic
  for (int i = 0; i < n; ++i) RED_ADD(out, 1.f);  // ~ blockers: atomic
  for (int i = 0; i < n; ++i) LDS_ADD(lds, 1u);  // ~ blockers: atomic
  auto bump = [&](int k) { asm volatile("atom.add.u32 %0, [%1], 1;" : "=r"(cnt[k]) : "l"(cnt)); };
  for (int i = 0; i < n; ++i) bump(i);  // ~ blockers: atomic
  for (int i = 0; i < n; ++i) {  // ~ blockers: none
    unsigned v;
    LDS_READ(v, lds);
    asm volatile("ds_write_b32 %0, %1" :: "v"(lds), "v"(v));
    asm volatile("redux.sync.add.u32 %0, %1, 0xffffffff;" : "=r"(v) : "r"(v));
    out[i] = (float)(v + h.read(i));
  }
}
