//! `dynamic-lds`: a loop that touches dynamically sized shared memory (LDS) is not unrolled.
//!
//! ## What it does
//! Blocks unrolling of a loop that reads or writes dynamic shared memory: an `extern __shared__`
//! array (file scope or local, also with `HIP_DYNAMIC_SHARED_ATTRIBUTE`), a
//! `HIP_DYNAMIC_SHARED(type, name)` declaration, or a pointer/reference initialised from one of
//! them, transitively (`float* a = smem; float* b = a + 4;`), or assigned from one later
//! (`float* p; p = smem + off;`). Uses inside macros of the same
//! file and inside `__device__` helpers that touch file-scope dynamic shared memory count too.
//! Static `__shared__ T x[N]` arrays do not block.
//!
//! ## Why
//! The size of dynamic LDS is only known at launch. Unrolled accesses are often rescheduled and
//! vectorised by the compiler assuming bounds it cannot check; when the loop's index range depends
//! on the launch-time allocation, the unrolled remainder can read past the allocation, and LDS
//! bank conflicts change with the access pattern. The tool will not guess a safe factor.
//!
//! ## Example
//! ```cpp
//! extern __shared__ float smem[];
//! float* row = smem + threadIdx.y * pitch;
//! #pragma unroll 8            // unroll-blocked: dynamic-lds
//! for (int i = 0; i < n; ++i) row[i] *= scale;
//! ```
//! Use a statically sized `__shared__` array when the size is a compile-time constant.
//!
//! ## Fix safety
//! No automatic fix. Silence a reviewed case with `// hip-unroll: allow(dynamic-lds)`.

use std::collections::HashSet;

use frontend::{Function, SharedKind, SourceFile};

pub const ID: &str = "dynamic-lds";

/// Names that denote dynamic shared memory inside `f`: the file's and the function's dynamic
/// declarations plus the local pointers/references initialised from them (transitively).
pub fn dynamic_names(file: &SourceFile, f: &Function) -> HashSet<String> {
    // File-scope ones, unless the function declares its own variable of that name (a static
    // `__shared__ float smem[256]` or a parameter shadows `extern __shared__ float smem[]`).
    let shadowed = |n: &str| {
        f.params.iter().any(|p| p.name == n)
            || f.shared
                .iter()
                .any(|s| s.name == n && s.kind == SharedKind::Static)
            || f.decls
                .iter()
                .any(|d| d.name == n && !f.shared.iter().any(|s| s.name == n))
    };
    let mut names: HashSet<String> = file
        .shared
        .iter()
        .filter(|s| s.kind != SharedKind::Static && !shadowed(&s.name))
        .chain(f.shared.iter().filter(|s| s.kind != SharedKind::Static))
        .map(|s| s.name.clone())
        .collect();
    if names.is_empty() {
        return names;
    }
    // Aliases: iterate to a fixpoint (declarations are in source order, so one or two passes).
    loop {
        let mut grew = false;
        for d in &f.decls {
            if names.contains(&d.name) || d.init.is_none() {
                continue;
            }
            let aliasing = d.is_pointer_or_ref || d.type_text.contains("auto");
            if aliasing && d.init_idents.iter().any(|n| names.contains(n)) {
                names.insert(d.name.clone());
                grew = true;
            }
        }
        // `float* p; ... p = smem + off;`: a pointer assigned from dynamic LDS later.
        for a in &f.assigns {
            if names.contains(&a.target) || !a.value_idents.iter().any(|n| names.contains(n)) {
                continue;
            }
            let is_pointer = f
                .decls
                .iter()
                .any(|d| d.name == a.target && d.is_pointer_or_ref)
                || f.params
                    .iter()
                    .any(|p| p.name == a.target && p.is_pointer_or_ref);
            if is_pointer {
                names.insert(a.target.clone());
                grew = true;
            }
        }
        if !grew {
            break;
        }
    }
    names
}
