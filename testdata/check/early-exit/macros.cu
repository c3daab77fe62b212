// Early exits through macros: a `return` in a macro leaves the loop; a `break` inside the
// macro's own `do { } while (0)` does not.
#define CHECK(x) if (!(x)) return;
#define CHECK_ALL(a, b) CHECK(a) CHECK(b)
#define STOP_IF(c) if (c) break;
#define TRY(x) do { if (!(x)) break; } while (0)

__global__ void macro_exits(int* v, int n) {
  for (int i = 0; i < n; ++i) {  // ~ blockers: early-exit
    CHECK(v[i] >= 0)
    v[i] += 1;
  }
  for (int i = 0; i < n; ++i) {  // ~ blockers: early-exit
    CHECK_ALL(v[i], v[i + 1])
  }
  for (int i = 0; i < n; ++i) {  // ~ blockers: early-exit
    STOP_IF(v[i] == 0)
  }
  for (int i = 0; i < n; ++i) {  // ~ blockers: none
    TRY(v[i] > 3);
  }
}
