// A conversion operator runs where C++ converts an object implicitly or by a cast: an
// initialiser (`float v = c;`), an assignment's value, an argument, a return value, a cast,
// a condition, an index, a braced list, and an operator the class does not define (the
// built-in one applies to the converted value: `c * 2.f`; not where a free operator takes
// it). A conversion that waits for the block (a value reduced across it, read once all
// threads wrote it) makes each of those loops a barrier loop; a class whose conversion does
// nothing of the kind, or an object only used through its members, does not.
struct BlockValue {
  float* slot;
  __device__ operator float() const {
    __syncthreads();  // every thread's contribution is in
    return *slot;
  }
};

// The conversion is inherited.
struct NamedBlockValue : BlockValue {
  int tag;
};

struct PlainValue {
  float v;
  __device__ operator float() const { return v; }
};

struct Counter {
  int n;
  __device__ Counter& operator+=(int k) {
    n += k;
    return *this;
  }
};

// A free operator taking it answers `*`: no conversion there.
struct ScaledBlockValue {
  float* slot;
  __device__ operator float() const {
    __syncthreads();
    return *slot;
  }
};
__device__ float operator*(const ScaledBlockValue& v, float k) { return *v.slot * k; }

// A copy that waits for the block (a snapshot taken once every thread wrote its part), and
// one held as a member: passing by value or initialising from the object copies it; passing
// it by reference or pointer to its own class copies nothing. A reference to another type
// (`const float&`) binds a converted temporary: the conversion runs.
struct SyncedSnapshot {
  float* slot;
  __device__ explicit SyncedSnapshot(float* s) : slot(s) {}
  __device__ SyncedSnapshot(const SyncedSnapshot& o) : slot(o.slot) { __syncthreads(); }
};
struct HoldsSnapshot {
  SyncedSnapshot snap;
  int tag;
};
__device__ float first(SyncedSnapshot s) { return *s.slot; }
__device__ float first_of(const HoldsSnapshot& h) { return *h.snap.slot; }
__device__ float first_ref(const SyncedSnapshot& s) { return *s.slot; }
__device__ float first_ptr(const SyncedSnapshot* s) { return *s->slot; }
__device__ float read_ref(const float& x) { return x; }

__device__ float twice(float x) { return 2.f * x; }

__device__ float as_float(BlockValue b) {
  return b;
}

__global__ void conversions(float* a, float* s, int n, BlockValue param) {
  BlockValue b{s};
  for (int i = 0; i < n; ++i) { float v = b; a[i] = v; }  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) { float v(b); a[i] = v; }  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) { a[i] = 0.f; a[i] = twice(b); }  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) { float v; v = param; a[i] = v; }  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) a[i] = static_cast<float>(b);  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) a[i] = (float)b;  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) { if (b) a[i] = 1.f; }  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) a[i] = b * 2.f;  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) { float w[1] = {b}; a[i] = w[0]; }  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) a[i] = as_float(b);  // ~ blockers: barrier
  NamedBlockValue nb{{s}, 1};
  for (int i = 0; i < n; ++i) { float v = nb; a[i] = v; }  // ~ blockers: barrier
  PlainValue p{1.f};
  for (int i = 0; i < n; ++i) { float v = p; a[i] = v * p; }  // ~ blockers: none
  for (int i = 0; i < n; ++i) a[i] = *b.slot;  // ~ blockers: none
  BlockValue* q = &b;
  for (int i = 0; i < n; ++i) a[i] = *q->slot;  // ~ blockers: none
  ScaledBlockValue sb{s};
  for (int i = 0; i < n; ++i) a[i] = sb * 2.f;  // ~ blockers: none
  SyncedSnapshot snap(s);
  for (int i = 0; i < n; ++i) a[i] = first(snap);  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) { SyncedSnapshot t = snap; a[i] = *t.slot; }  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) a[i] = first_ref(snap);  // ~ blockers: none
  HoldsSnapshot hs{SyncedSnapshot(s), 0};
  for (int i = 0; i < n; ++i) a[i] = first_of(hs);  // ~ blockers: none
  for (int i = 0; i < n; ++i) a[i] = read_ref(b);  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) a[i] = read_ref(p);  // ~ blockers: none
  for (int i = 0; i < n; ++i) { HoldsSnapshot h2 = hs; a[i] = *h2.snap.slot; }  // ~ blockers: barrier
  Counter c{0};
  for (int i = 0; i < n; ++i) c += i;  // ~ blockers: none
  a[0] = static_cast<float>(c.n);
}
