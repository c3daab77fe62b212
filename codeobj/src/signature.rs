//! Signature invariance: two code objects must lay out each kernel's arguments identically
//! (names, offsets, sizes, value kinds, kernarg size) for a rewritten kernel to be a drop-in
//! replacement (transforms and replay rely on this). For NVIDIA cubins the layout is each
//! kernel's parameter ordinals, offsets and sizes and its parameter-block size
//! ([`compare_cubins`]; cubins name no parameter and no value kind).

use crate::cubin::CubinKernel;
use crate::metadata::KernelMeta;
use crate::CodeObject;
use serde::Serialize;

/// One difference between the baseline (`a`) and the variant (`b`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Difference {
    /// A kernel present in `a` only.
    MissingKernel {
        kernel: String,
    },
    /// A kernel present in `b` only.
    ExtraKernel {
        kernel: String,
    },
    KernargSize {
        kernel: String,
        a: u32,
        b: u32,
    },
    ArgCount {
        kernel: String,
        a: usize,
        b: usize,
    },
    /// Argument `index` differs in `field` (`name`, `offset`, `size`, `value_kind`).
    Arg {
        kernel: String,
        index: usize,
        field: &'static str,
        a: String,
        b: String,
    },
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Difference::MissingKernel { kernel } => write!(f, "{kernel}: missing from the variant"),
            Difference::ExtraKernel { kernel } => write!(f, "{kernel}: only in the variant"),
            Difference::KernargSize { kernel, a, b } => {
                write!(f, "{kernel}: kernarg size {a} -> {b}")
            }
            Difference::ArgCount { kernel, a, b } => write!(f, "{kernel}: {a} arguments -> {b}"),
            Difference::Arg {
                kernel,
                index,
                field,
                a,
                b,
            } => write!(f, "{kernel}: argument {index} {field} `{a}` -> `{b}`"),
        }
    }
}

/// Compare the kernel argument layouts of two code objects (matched by kernel name); an empty
/// result means the signatures are identical.
pub fn compare(a: &CodeObject, b: &CodeObject) -> Vec<Difference> {
    let ka: Vec<&KernelMeta> = a.kernels.iter().map(|k| &k.meta).collect();
    let kb: Vec<&KernelMeta> = b.kernels.iter().map(|k| &k.meta).collect();
    compare_kernels(&ka, &kb)
}

/// As [`compare`], over kernel metadata lists.
pub fn compare_kernels(a: &[&KernelMeta], b: &[&KernelMeta]) -> Vec<Difference> {
    compare_layouts(
        &a.iter().map(|k| Layout::of_meta(k)).collect::<Vec<_>>(),
        &b.iter().map(|k| Layout::of_meta(k)).collect::<Vec<_>>(),
    )
}

/// As [`compare`], for the kernels of two NVIDIA cubins (by mangled name): the parameter
/// block's size (as `kernarg size`), the parameter count, and each parameter's offset and size.
pub fn compare_cubins(a: &[CubinKernel], b: &[CubinKernel]) -> Vec<Difference> {
    compare_layouts(
        &a.iter().map(Layout::of_cubin).collect::<Vec<_>>(),
        &b.iter().map(Layout::of_cubin).collect::<Vec<_>>(),
    )
}

/// A kernel's argument layout as the comparison sees it, whatever the code object's format:
/// per argument, its fields in the order they are reported.
struct Layout<'k> {
    name: &'k str,
    kernarg_size: u32,
    args: Vec<Vec<(&'static str, String)>>,
}

impl<'k> Layout<'k> {
    /// AMDGPU metadata: each argument's name, offset, size and value kind.
    fn of_meta(k: &'k KernelMeta) -> Layout<'k> {
        Layout {
            name: &k.name,
            kernarg_size: k.kernarg_segment_size,
            args: k
                .args
                .iter()
                .map(|x| {
                    vec![
                        ("name", x.name.clone().unwrap_or_default()),
                        ("offset", x.offset.to_string()),
                        ("size", x.size.to_string()),
                        ("value_kind", x.value_kind.clone()),
                    ]
                })
                .collect(),
        }
    }

    /// A cubin's parameters: offset and size (no name, no value kind).
    fn of_cubin(k: &'k CubinKernel) -> Layout<'k> {
        Layout {
            name: &k.name,
            kernarg_size: k.param_bytes,
            args: k
                .params
                .iter()
                .map(|&(_, offset, size)| {
                    vec![("offset", offset.to_string()), ("size", size.to_string())]
                })
                .collect(),
        }
    }
}

/// The differences of two layout lists, kernels matched by name.
fn compare_layouts(a: &[Layout<'_>], b: &[Layout<'_>]) -> Vec<Difference> {
    let mut out = Vec::new();
    for ka in a {
        let kernel = ka.name.to_string();
        let Some(kb) = b.iter().find(|k| k.name == ka.name) else {
            out.push(Difference::MissingKernel { kernel });
            continue;
        };
        if ka.kernarg_size != kb.kernarg_size {
            out.push(Difference::KernargSize {
                kernel: kernel.clone(),
                a: ka.kernarg_size,
                b: kb.kernarg_size,
            });
        }
        if ka.args.len() != kb.args.len() {
            out.push(Difference::ArgCount {
                kernel: kernel.clone(),
                a: ka.args.len(),
                b: kb.args.len(),
            });
        }
        for (index, (x, y)) in ka.args.iter().zip(&kb.args).enumerate() {
            for ((field, p), (_, q)) in x.iter().zip(y) {
                if p != q {
                    out.push(Difference::Arg {
                        kernel: kernel.clone(),
                        index,
                        field,
                        a: p.clone(),
                        b: q.clone(),
                    });
                }
            }
        }
    }
    for kb in b {
        if !a.iter().any(|k| k.name == kb.name) {
            out.push(Difference::ExtraKernel {
                kernel: kb.name.to_string(),
            });
        }
    }
    out
}

#[cfg(test)]
mod cubin_tests {
    use super::*;

    fn k(name: &str, params: &[(u32, u32, u32)], bytes: u32) -> CubinKernel {
        CubinKernel {
            name: name.into(),
            registers: 0,
            frame_bytes: 0,
            shared_bytes: 0,
            params: params.to_vec(),
            param_bytes: bytes,
            spills: None,
        }
    }

    #[test]
    fn cubin_layouts_are_compared_by_kernel() {
        let a = [
            k("k", &[(0, 0, 8), (1, 8, 4), (2, 12, 4)], 16),
            k("gone", &[], 0),
        ];
        let b = [
            k("k", &[(0, 0, 8), (1, 8, 8), (2, 16, 4)], 20),
            k("new", &[], 0),
        ];
        let got: Vec<String> = compare_cubins(&a, &b)
            .iter()
            .map(|d| d.to_string())
            .collect();
        assert_eq!(
            got,
            [
                "k: kernarg size 16 -> 20",
                "k: argument 1 size `4` -> `8`",
                "k: argument 2 offset `12` -> `16`",
                "gone: missing from the variant",
                "new: only in the variant"
            ]
        );
        assert!(compare_cubins(&a, &a).is_empty());
    }
}
