// A fake HSA runtime for hip-unroll's replay tests (built with `cc -shared -fPIC`, loaded
// through HIP_UNROLL_HSA_RUNTIME). It exports the functions replay resolves, with the headers'
// signatures, and simulates a GPU on the CPU: exact-address vmem reservations are real
// PROT_NONE mappings made RW when mapped, the queue is a real AQL ring processed when the
// doorbell is rung, and the one kernel it knows, scale(float* out, const float* in, int n,
// float s), is computed on the host from its kernargs at the captured addresses.
//
// Behaviour switches (environment):
//   FAKE_HSA_NO_GPU=1              only a CPU agent
//   FAKE_HSA_RESERVE=relocate|fail  vmem_address_reserve relocates or fails (default: exact)
//   FAKE_HSA_KERNARG_SIZE=N        kernarg segment size reported for kernel symbols
// Compiled with -DFAKE_VMEM to export the ROCm 6 vmem API (without it, like ROCm 5.2).
// A code object containing the bytes "hip_unroll_fake_bug" computes one element wrong.
// A dispatch takes 1000 + (code object size % 997) ticks of a 100 MHz clock.
#define _GNU_SOURCE
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

typedef struct {
  int64_t value;
  uint64_t start, end;
  hsa_queue_t* doorbell_of;
} fake_signal;

typedef struct {
  unsigned char* elf;
  size_t len;
} fake_reader;

typedef struct {
  unsigned char* elf;
  size_t len;
} fake_exe;

static hsa_signal_t sig(fake_signal* s) { hsa_signal_t h = {(uint64_t)(uintptr_t)s}; return h; }
static fake_signal* S(hsa_signal_t h) { return (fake_signal*)(uintptr_t)h.handle; }
static const char* env(const char* k) { const char* v = getenv(k); return v ? v : ""; }

hsa_status_t hsa_init(void) { return HSA_STATUS_SUCCESS; }
hsa_status_t hsa_shut_down(void) { return HSA_STATUS_SUCCESS; }
hsa_status_t hsa_status_string(hsa_status_t s, const char** out) {
  *out = s == HSA_STATUS_SUCCESS ? "HSA_STATUS_SUCCESS: fake" : "HSA_STATUS_ERROR: fake failure. More words";
  return HSA_STATUS_SUCCESS;
}
hsa_status_t hsa_system_get_info(hsa_system_info_t a, void* v) {
  if (a == HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY) { *(uint64_t*)v = 100000000; return HSA_STATUS_SUCCESS; }
  return HSA_STATUS_ERROR_INVALID_ARGUMENT;
}

enum { CPU = 1, GPU = 2, KERNARG_POOL = 11, DEVICE_POOL = 12 };

hsa_status_t hsa_iterate_agents(hsa_status_t (*cb)(hsa_agent_t, void*), void* data) {
  hsa_agent_t cpu = {CPU}, gpu = {GPU};
  hsa_status_t s = cb(cpu, data);
  if (s != HSA_STATUS_SUCCESS) return s == HSA_STATUS_INFO_BREAK ? HSA_STATUS_SUCCESS : s;
  if (strcmp(env("FAKE_HSA_NO_GPU"), "1") == 0) return HSA_STATUS_SUCCESS;
  s = cb(gpu, data);
  return s == HSA_STATUS_INFO_BREAK ? HSA_STATUS_SUCCESS : s;
}
hsa_status_t hsa_agent_get_info(hsa_agent_t a, hsa_agent_info_t attr, void* v) {
  switch ((int)attr) {
    case HSA_AGENT_INFO_DEVICE: *(hsa_device_type_t*)v = a.handle == GPU ? HSA_DEVICE_TYPE_GPU : HSA_DEVICE_TYPE_CPU; return HSA_STATUS_SUCCESS;
    case HSA_AGENT_INFO_NAME: memset(v, 0, 64); strcpy((char*)v, a.handle == GPU ? "gfx90a" : "fake-cpu"); return HSA_STATUS_SUCCESS;
    default: return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
}
hsa_status_t hsa_amd_agent_iterate_memory_pools(hsa_agent_t a, hsa_status_t (*cb)(hsa_amd_memory_pool_t, void*), void* d) {
  hsa_amd_memory_pool_t p = {a.handle == GPU ? DEVICE_POOL : KERNARG_POOL};
  hsa_status_t s = cb(p, d);
  return s == HSA_STATUS_INFO_BREAK ? HSA_STATUS_SUCCESS : s;
}
hsa_status_t hsa_amd_memory_pool_get_info(hsa_amd_memory_pool_t p, hsa_amd_memory_pool_info_t a, void* v) {
  switch ((int)a) {
    case HSA_AMD_MEMORY_POOL_INFO_SEGMENT: *(hsa_amd_segment_t*)v = HSA_AMD_SEGMENT_GLOBAL; return HSA_STATUS_SUCCESS;
    case HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS:
      *(uint32_t*)v = p.handle == DEVICE_POOL ? HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED
                                             : HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT | HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED;
      return HSA_STATUS_SUCCESS;
    case HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED: *(bool*)v = true; return HSA_STATUS_SUCCESS;
    case HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE: *(size_t*)v = 4096; return HSA_STATUS_SUCCESS;
    default: return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
}
hsa_status_t hsa_amd_memory_pool_allocate(hsa_amd_memory_pool_t p, size_t n, uint32_t f, void** ptr) {
  (void)p; (void)f;
  return posix_memalign(ptr, 4096, n ? n : 1) == 0 ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR_OUT_OF_RESOURCES;
}
hsa_status_t hsa_amd_memory_pool_free(void* p) { free(p); return HSA_STATUS_SUCCESS; }
hsa_status_t hsa_amd_agents_allow_access(uint32_t n, const hsa_agent_t* a, const uint32_t* f, const void* p) {
  (void)n; (void)a; (void)f; (void)p; return HSA_STATUS_SUCCESS;
}
hsa_status_t hsa_memory_copy(void* dst, const void* src, size_t n) { memcpy(dst, src, n); return HSA_STATUS_SUCCESS; }

// ---- signals and the queue --------------------------------------------------------------

hsa_status_t hsa_signal_create(hsa_signal_value_t init, uint32_t n, const hsa_agent_t* c, hsa_signal_t* out) {
  (void)n; (void)c;
  fake_signal* s = calloc(1, sizeof *s);
  s->value = init;
  *out = sig(s);
  return HSA_STATUS_SUCCESS;
}
hsa_status_t hsa_signal_destroy(hsa_signal_t s) { free(S(s)); return HSA_STATUS_SUCCESS; }
void hsa_signal_store_relaxed(hsa_signal_t s, hsa_signal_value_t v) { S(s)->value = v; }
hsa_signal_value_t hsa_signal_wait_scacquire(hsa_signal_t s, hsa_signal_condition_t c, hsa_signal_value_t cmp, uint64_t t, hsa_wait_state_t w) {
  (void)c; (void)cmp; (void)t; (void)w;
  return __atomic_load_n(&S(s)->value, __ATOMIC_ACQUIRE);
}

static unsigned char* find(const unsigned char* hay, size_t n, const char* needle) {
  return memmem(hay, n, needle, strlen(needle));
}

typedef struct {
  fake_exe* exe;
  char name[256];
} fake_symbol;

typedef struct {
  hsa_queue_t q;
  uint64_t write, read;
} fake_queue;

static void run_scale(const hsa_kernel_dispatch_packet_t* p, const fake_exe* e) {
  const unsigned char* ka = (const unsigned char*)p->kernarg_address;
  float* out; const float* in; int n; float s;
  memcpy(&out, ka, 8); memcpy(&in, ka + 8, 8); memcpy(&n, ka + 16, 4); memcpy(&s, ka + 20, 4);
  int bug = find(e->elf, e->len, "hip_unroll_fake_bug") != NULL;
  for (uint32_t i = 0; i < p->grid_size_x && (int)i < n; i++) {
    float acc = 0.0f;
    for (int k = 0; k < 8; k++) acc += in[(i + k) % n] * s;
    out[i] = acc + (bug && i == 5 ? 1.0f : 0.0f);
  }
}

static void process(fake_queue* fq, uint64_t upto) {
  hsa_kernel_dispatch_packet_t* ring = fq->q.base_address;
  while (fq->read <= upto && fq->read < fq->write) {
    hsa_kernel_dispatch_packet_t* p = &ring[fq->read % fq->q.size];
    if ((p->header & 0xff) == HSA_PACKET_TYPE_KERNEL_DISPATCH) {
      fake_symbol* sym = (fake_symbol*)(uintptr_t)p->kernel_object;
      if (strstr(sym->name, "scale")) run_scale(p, sym->exe);
      fake_signal* done = S(p->completion_signal);
      if (done) {
        done->start = 1000000;
        done->end = done->start + 1000 + sym->exe->len % 997;
        __atomic_sub_fetch(&done->value, 1, __ATOMIC_RELEASE);
      }
    }
    p->header = HSA_PACKET_TYPE_INVALID;
    fq->read++;
  }
}

void hsa_signal_store_screlease(hsa_signal_t s, hsa_signal_value_t v) {
  fake_signal* f = S(s);
  f->value = v;
  if (f->doorbell_of) process((fake_queue*)f->doorbell_of, (uint64_t)v);
}

hsa_status_t hsa_queue_create(hsa_agent_t a, uint32_t size, hsa_queue_type32_t t, void (*cb)(hsa_status_t, hsa_queue_t*, void*),
                              void* d, uint32_t ps, uint32_t gs, hsa_queue_t** out) {
  (void)a; (void)t; (void)cb; (void)d; (void)ps; (void)gs;
  fake_queue* fq = calloc(1, sizeof *fq);
  fq->q.size = size;
  posix_memalign(&fq->q.base_address, 64, (size_t)size * 64);
  memset(fq->q.base_address, 0, (size_t)size * 64);
  fake_signal* door = calloc(1, sizeof *door);
  door->doorbell_of = &fq->q;
  fq->q.doorbell_signal = sig(door);
  *out = &fq->q;
  return HSA_STATUS_SUCCESS;
}
hsa_status_t hsa_queue_destroy(hsa_queue_t* q) { free(q->base_address); free(S(q->doorbell_signal)); free(q); return HSA_STATUS_SUCCESS; }
uint64_t hsa_queue_add_write_index_relaxed(const hsa_queue_t* q, uint64_t n) { fake_queue* f = (fake_queue*)q; uint64_t w = f->write; f->write += n; return w; }
uint64_t hsa_queue_load_read_index_scacquire(const hsa_queue_t* q) { return ((const fake_queue*)q)->read; }
hsa_status_t hsa_amd_profiling_set_profiler_enabled(hsa_queue_t* q, int e) { (void)q; (void)e; return HSA_STATUS_SUCCESS; }
hsa_status_t hsa_amd_profiling_get_dispatch_time(hsa_agent_t a, hsa_signal_t s, hsa_amd_profiling_dispatch_time_t* t) {
  (void)a; t->start = S(s)->start; t->end = S(s)->end; return HSA_STATUS_SUCCESS;
}

// ---- code objects -----------------------------------------------------------------------

hsa_status_t hsa_code_object_reader_create_from_memory(const void* p, size_t n, hsa_code_object_reader_t* r) {
  fake_reader* f = malloc(sizeof *f);
  f->elf = malloc(n); memcpy(f->elf, p, n); f->len = n;
  r->handle = (uint64_t)(uintptr_t)f;
  return HSA_STATUS_SUCCESS;
}
hsa_status_t hsa_code_object_reader_destroy(hsa_code_object_reader_t r) {
  fake_reader* f = (fake_reader*)(uintptr_t)r.handle; free(f->elf); free(f); return HSA_STATUS_SUCCESS;
}
hsa_status_t hsa_executable_create_alt(hsa_profile_t p, hsa_default_float_rounding_mode_t m, const char* o, hsa_executable_t* e) {
  (void)p; (void)m; (void)o;
  e->handle = (uint64_t)(uintptr_t)calloc(1, sizeof(fake_exe));
  return HSA_STATUS_SUCCESS;
}
hsa_status_t hsa_executable_destroy(hsa_executable_t e) { fake_exe* f = (fake_exe*)(uintptr_t)e.handle; free(f->elf); free(f); return HSA_STATUS_SUCCESS; }
hsa_status_t hsa_executable_load_agent_code_object(hsa_executable_t e, hsa_agent_t a, hsa_code_object_reader_t r, const char* o, hsa_loaded_code_object_t* l) {
  (void)a; (void)o; (void)l;
  fake_exe* x = (fake_exe*)(uintptr_t)e.handle;
  fake_reader* f = (fake_reader*)(uintptr_t)r.handle;
  x->elf = malloc(f->len); memcpy(x->elf, f->elf, f->len); x->len = f->len;
  return HSA_STATUS_SUCCESS;
}
hsa_status_t hsa_executable_freeze(hsa_executable_t e, const char* o) { (void)e; (void)o; return HSA_STATUS_SUCCESS; }
hsa_status_t hsa_executable_get_symbol_by_name(hsa_executable_t e, const char* name, const hsa_agent_t* a, hsa_executable_symbol_t* s) {
  (void)a;
  fake_exe* x = (fake_exe*)(uintptr_t)e.handle;
  if (!find(x->elf, x->len, name)) return HSA_STATUS_ERROR_INVALID_SYMBOL_NAME;
  fake_symbol* sym = calloc(1, sizeof *sym);
  sym->exe = x;
  strncpy(sym->name, name, sizeof sym->name - 1);
  s->handle = (uint64_t)(uintptr_t)sym;
  return HSA_STATUS_SUCCESS;
}
hsa_status_t hsa_executable_symbol_get_info(hsa_executable_symbol_t s, hsa_executable_symbol_info_t a, void* v) {
  switch ((int)a) {
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT: *(uint64_t*)v = s.handle; return HSA_STATUS_SUCCESS;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE: *(uint32_t*)v = (uint32_t)atoi(env("FAKE_HSA_KERNARG_SIZE")); return HSA_STATUS_SUCCESS;
    default: return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
}

// ---- vmem (ROCm 6) ----------------------------------------------------------------------
#ifdef FAKE_VMEM
typedef struct { uint64_t handle; } hsa_amd_vmem_alloc_handle_t;
typedef struct { hsa_access_permission_t permissions; hsa_agent_t agent_handle; } hsa_amd_memory_access_desc_t;

hsa_status_t hsa_amd_vmem_address_reserve(void** va, size_t size, uint64_t address, uint64_t flags) {
  (void)flags;
  if (strcmp(env("FAKE_HSA_RESERVE"), "fail") == 0) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  void* want = strcmp(env("FAKE_HSA_RESERVE"), "relocate") == 0 ? NULL : (void*)(uintptr_t)address;
  void* p = mmap(want, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | (want ? MAP_FIXED_NOREPLACE : 0), -1, 0);
  if (p == MAP_FAILED) p = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  *va = p;
  return HSA_STATUS_SUCCESS;
}
hsa_status_t hsa_amd_vmem_address_free(void* va, size_t size) { munmap(va, size); return HSA_STATUS_SUCCESS; }
hsa_status_t hsa_amd_vmem_handle_create(hsa_amd_memory_pool_t p, size_t size, int type, uint64_t flags, hsa_amd_vmem_alloc_handle_t* h) {
  (void)p; (void)type; (void)flags; h->handle = size; return HSA_STATUS_SUCCESS;
}
hsa_status_t hsa_amd_vmem_handle_release(hsa_amd_vmem_alloc_handle_t h) { (void)h; return HSA_STATUS_SUCCESS; }
hsa_status_t hsa_amd_vmem_map(void* va, size_t size, size_t off, hsa_amd_vmem_alloc_handle_t h, uint64_t flags) {
  (void)off; (void)h; (void)flags;
  return mprotect(va, size, PROT_READ | PROT_WRITE) == 0 ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR_INVALID_ARGUMENT;
}
hsa_status_t hsa_amd_vmem_unmap(void* va, size_t size) { mprotect(va, size, PROT_NONE); return HSA_STATUS_SUCCESS; }
hsa_status_t hsa_amd_vmem_set_access(void* va, size_t size, const hsa_amd_memory_access_desc_t* d, size_t n) {
  (void)va; (void)size;
  return n == 1 && d[0].permissions == HSA_ACCESS_PERMISSION_RW && d[0].agent_handle.handle == GPU ? HSA_STATUS_SUCCESS
                                                                                                 : HSA_STATUS_ERROR_INVALID_ARGUMENT;
}
#endif
