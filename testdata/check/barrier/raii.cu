// Constructors and destructors of local objects run where the object is declared and where its
// scope ends: a declaration in the loop body (`Guard g;`, `Guard g(x);`, `Guard g{x};`,
// `Guard g = Guard(x);`) or a temporary (`Guard{}`, `Guard(x)`) calls them in every iteration.
// A pointer or a reference constructs nothing; `Guard g();` declares a function.
struct SyncOnEnter {
  __device__ SyncOnEnter() { __syncthreads(); }
  __device__ explicit SyncOnEnter(int phase) { if (phase >= 0) __syncthreads(); }
};

struct SyncOnExit {
  float* s;
  __device__ explicit SyncOnExit(float* p) : s(p) {}
  __device__ ~SyncOnExit() { __syncthreads(); }
};

struct Holder {
  SyncOnExit inner;  // destroyed with its holder
  int tag;
};

struct Plain {
  float v;
  __device__ Plain() : v(0.f) {}
  __device__ ~Plain() {}
};

// Members and bases whose type is a template parameter: what the object's type binds it to.
template <typename T> struct Box { T v; int tag; };
template <typename T, int N> struct Over : T { float w[N]; };
struct Nest { Box<SyncOnEnter> b; };

__global__ void raii(float* a, float* s, int n) {
  for (int i = 0; i < n; ++i) { SyncOnEnter g; a[i] = 0.f; }  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) { SyncOnEnter g(i); a[i] = 0.f; }  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) { SyncOnEnter g{i}; a[i] = 0.f; }  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) { SyncOnExit g(s); a[i] = 0.f; }  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) { auto g = SyncOnExit(s); a[i] = 0.f; }  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) { SyncOnEnter{}; a[i] = 0.f; }  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) { SyncOnExit{s}; a[i] = 0.f; }  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) { Holder h{SyncOnExit(s), i}; a[i] = 0.f; }  // ~ blockers: barrier
  SyncOnExit outer(s);
  for (int i = 0; i < n; ++i) { SyncOnExit* p = &outer; a[i] = p->s[i]; }  // ~ blockers: none
  for (int i = 0; i < n; ++i) { SyncOnExit& r = outer; a[i] = r.s[i]; }  // ~ blockers: none
  for (int i = 0; i < n; ++i) { SyncOnEnter f(); a[i] = 0.f; }  // ~ blockers: none
  for (int i = 0; i < n; ++i) { Plain p; a[i] = p.v; }  // ~ blockers: none
  for (int i = 0; i < n; ++i) { Box<SyncOnEnter> b; a[i] = 0.f; }  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) { Over<SyncOnEnter, 2> o; a[i] = o.w[0]; }  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) { Nest t; a[i] = 0.f; }  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) { Box<Plain> b; a[i] = b.v.v; }  // ~ blockers: none
}
