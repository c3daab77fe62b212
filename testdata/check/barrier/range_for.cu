// A range-for calls its range's `begin()` and `end()`, and on the iterator `begin()` returns its
// `!=`, `*` and `++` in every iteration. A range whose iterator steps with a barrier (a
// block-strided tile walk that syncs between tiles) makes the loop a barrier loop, whatever
// the body does; a range over an array or over a class whose iterator does nothing of the
// kind does not. The range's type comes from a variable's declaration, a parameter, a
// temporary `Tiles(n)`/`Tiles{n}`, or a data member in a method.
struct SyncedTiles {
  struct Iter {
    int i;
    __device__ int operator*() const { return i; }
    __device__ Iter& operator++() {
      __syncthreads();  // the next tile is loaded by the whole block
      i += blockDim.x;
      return *this;
    }
    __device__ bool operator!=(const Iter& o) const { return i < o.i; }
  };
  int n;
  __device__ explicit SyncedTiles(int n_) : n(n_) {}
  __device__ Iter begin() const { return Iter{static_cast<int>(threadIdx.x)}; }
  __device__ Iter end() const { return Iter{n}; }
};

// Its `end()` waits for the block (once, in the loop's header).
struct FencedRange {
  int* first;
  int* last;
  __device__ int* begin() const { return first; }
  __device__ int* end() const {
    __syncthreads();
    return last;
  }
};

struct PlainTiles {
  struct Iter {
    int i;
    __device__ int operator*() const { return i; }
    __device__ Iter& operator++() {
      i += blockDim.x;
      return *this;
    }
    __device__ bool operator!=(const Iter& o) const { return i < o.i; }
  };
  int n;
  __device__ explicit PlainTiles(int n_) : n(n_) {}
  __device__ Iter begin() const { return Iter{static_cast<int>(threadIdx.x)}; }
  __device__ Iter end() const { return Iter{n}; }
};

struct Walker {
  SyncedTiles tiles;
  PlainTiles plain;
  __device__ void walk(float* a) {
    for (int i : tiles) a[i] = 0.f;  // ~ blockers: barrier
    for (int i : plain) a[i] = 0.f;  // ~ blockers: none
  }
};

__global__ void range_for(float* a, int* idx, int n, SyncedTiles param) {
  SyncedTiles tiles(n);
  for (int i : tiles) a[i] += 1.f;  // ~ blockers: barrier
  for (int i : param) a[i] += 1.f;  // ~ blockers: barrier
  for (int i : SyncedTiles(n)) a[i] += 1.f;  // ~ blockers: barrier
  for (int i : SyncedTiles{n}) a[i] += 1.f;  // ~ blockers: barrier
  FencedRange fenced{idx, idx + n};
  for (int i : fenced) a[i] += 1.f;  // ~ blockers: barrier
  PlainTiles plain(n);
  for (int i : plain) a[i] += 1.f;  // ~ blockers: none
  for (int i : PlainTiles(n)) a[i] += 1.f;  // ~ blockers: none
  float local[4] = {0.f, 1.f, 2.f, 3.f};
  for (float v : local) a[threadIdx.x] += v;  // ~ blockers: none
  Walker w{SyncedTiles(n), PlainTiles(n)};
  w.walk(a);
}
