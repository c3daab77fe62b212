//! A kernel parameter's C/C++ type as a launch spec describes it: a scalar of an element type, a
//! buffer of an element type (a CUDA vector type such as `float4` as several elements), or a
//! type no spec can hold (a struct by value, half precision, a pointer to pointers, a
//! reference), with the reason. Reads the parameter types of `Function::signature` (normalised:
//! names, `__restrict__` and top-level `const` left out), after template arguments and the
//! unit's type aliases are substituted.

use runner::elem::Elem;
use std::collections::HashMap;

/// One parameter, as a spec can describe it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    /// Passed by value: `int n`, `float alpha`.
    Scalar { elem: Elem },
    /// A pointer to elements: `float*`, `const int*`; `lanes` elements per pointee (4 for
    /// `float4*`, 1 otherwise); `constant` when the pointee is `const`.
    Buffer {
        elem: Elem,
        lanes: u32,
        constant: bool,
    },
    /// A pointer to a type hip-unroll does not know (a typedef it cannot resolve, `void*`): the
    /// spec gets a placeholder element type.
    UnknownBuffer { constant: bool },
    /// A value of a type hip-unroll does not know: a placeholder scalar type.
    UnknownScalar,
    /// No spec can describe it; the reason.
    Unsupported(String),
}

/// Half-precision types: no spec element type holds them.
const HALF: &[&str] = &[
    "__half",
    "half",
    "__half2",
    "half2",
    "__nv_bfloat16",
    "nv_bfloat16",
    "__nv_bfloat162",
    "__hip_bfloat16",
    "hip_bfloat16",
    "__hip_bfloat162",
    "bf16",
    "bfloat16",
    "__bf16",
    "_Float16",
    "__fp16",
];

/// The element type of a scalar C/C++ type name (qualifiers already removed), with the
/// fixed-width and `<cstddef>` names (LP64, as nvcc and hipcc compile device code).
pub fn scalar_elem(base: &str) -> Option<Elem> {
    let b = base.strip_prefix("std::").unwrap_or(base);
    let b = b.strip_prefix("::").unwrap_or(b);
    Some(match b {
        "float" => Elem::F32,
        "double" => Elem::F64,
        "int" | "signed" | "signed int" | "int32_t" => Elem::I32,
        "unsigned" | "unsigned int" | "uint32_t" | "uint" => Elem::U32,
        "long" | "long int" | "signed long" | "long long" | "long long int"
        | "signed long long" | "int64_t" | "ssize_t" | "ptrdiff_t" | "intptr_t" | "long_t" => {
            Elem::I64
        }
        "unsigned long"
        | "unsigned long int"
        | "unsigned long long"
        | "unsigned long long int"
        | "uint64_t"
        | "size_t"
        | "uintptr_t" => Elem::U64,
        "short" | "short int" | "signed short" | "int16_t" => Elem::I16,
        "unsigned short" | "unsigned short int" | "uint16_t" | "ushort" => Elem::U16,
        "char" | "signed char" | "int8_t" => Elem::I8,
        "unsigned char" | "uint8_t" | "uchar" | "bool" => Elem::U8,
        _ => return None,
    })
}

/// A CUDA/HIP vector type (`float4`, `int2`, `uchar4`, `double2`): its element and lanes.
pub fn vector_elem(base: &str) -> Option<(Elem, u32)> {
    let digits = base.trim_end_matches(|c: char| c.is_ascii_digit());
    let lanes: u32 = base[digits.len()..].parse().ok()?;
    if !(1..=4).contains(&lanes) {
        return None;
    }
    let elem = match digits {
        "float" => Elem::F32,
        "double" => Elem::F64,
        "int" => Elem::I32,
        "uint" => Elem::U32,
        "short" => Elem::I16,
        "ushort" => Elem::U16,
        "char" => Elem::I8,
        "uchar" => Elem::U8,
        "long" | "longlong" => Elem::I64,
        "ulong" | "ulonglong" => Elem::U64,
        _ => return None,
    };
    Some((elem, lanes))
}

/// The parameter types of a normalised signature `(const float*, int)`, split at top-level
/// commas.
pub fn split_signature(sig: &str) -> Vec<String> {
    let inner = sig
        .trim()
        .strip_prefix('(')
        .and_then(|s| s.strip_suffix(')'))
        .unwrap_or(sig);
    split_top(inner, ',')
        .into_iter()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty() && s != "void")
        .collect()
}

/// `text` split at `sep` outside `()`, `<>`, `[]` and `{}`.
pub fn split_top(text: &str, sep: char) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for c in text.chars() {
        match c {
            '(' | '<' | '[' | '{' => depth += 1,
            ')' | '>' | ']' | '}' => depth -= 1,
            c if c == sep && depth == 0 => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() || !out.is_empty() {
        out.push(cur);
    }
    out
}

/// What a parameter type is made of: its base type name, the pointer levels over it, whether
/// it is a reference, and whether the pointee (or the value) is `const`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declared {
    pub base: String,
    pub pointers: u32,
    pub reference: bool,
    pub constant: bool,
}

/// Read a normalised parameter type (`const float*`, `float const*`, `unsigned int`, `T*`,
/// `float[]`, `float (&)[4]`).
pub fn declared(ty: &str) -> Declared {
    let mut pointers = 0u32;
    let mut reference = false;
    let mut words: Vec<String> = Vec::new();
    let mut constant = false;
    let mut cur = String::new();
    let mut depth = 0i32;
    let mut in_brackets = false;
    let flush = |cur: &mut String, words: &mut Vec<String>| {
        if !cur.is_empty() {
            words.push(std::mem::take(cur));
        }
    };
    for c in ty.chars() {
        if in_brackets {
            in_brackets = c != ']';
            continue;
        }
        match c {
            '<' => {
                depth += 1;
                cur.push(c);
            }
            '>' => {
                depth -= 1;
                cur.push(c);
            }
            _ if depth > 0 => cur.push(c),
            '*' => {
                flush(&mut cur, &mut words);
                pointers += 1;
            }
            '&' => {
                flush(&mut cur, &mut words);
                reference = true;
            }
            '[' => {
                // `float a[]`, `float a[4]` is `float* a`.
                flush(&mut cur, &mut words);
                pointers += 1;
                in_brackets = true;
            }
            c if c.is_whitespace() || c == '(' || c == ')' => flush(&mut cur, &mut words),
            _ => cur.push(c),
        }
    }
    flush(&mut cur, &mut words);
    let mut base = Vec::new();
    for w in words {
        match w.as_str() {
            "const" => constant = true,
            "volatile" | "__restrict__" | "__restrict" | "restrict" | "struct" | "class"
            | "union" | "enum" | "typename" => {}
            _ => base.push(w),
        }
    }
    Declared {
        base: base.join(" "),
        pointers,
        reference,
        constant,
    }
}

/// The type aliases of a unit (`typedef unsigned int uint;`, `using idx_t = int64_t;`) and the
/// names of the classes it defines, to resolve parameter types.
#[derive(Debug, Default, Clone)]
pub struct Types {
    pub aliases: HashMap<String, String>,
    pub classes: std::collections::HashSet<String>,
}

impl Types {
    /// Read the aliases and class names of `text` (a source or header) with the workspace's
    /// lexer: `typedef TYPE NAME;` (no function pointers), `using NAME = TYPE;`,
    /// `struct NAME {`, `class NAME {`, `union NAME {`.
    pub fn scan(&mut self, text: &[u8]) {
        use frontend::lex::{tokenize, Tok};
        let toks = tokenize(text, 0..text.len());
        let word = |i: usize| match toks.get(i).map(|t| &t.tok) {
            Some(Tok::Ident(s)) => Some(s.as_str()),
            _ => None,
        };
        let punct = |i: usize, p: &str| matches!(toks.get(i).map(|t| &t.tok), Some(Tok::Punct(q)) if *q == p);
        let span_text = |a: usize, b: usize| -> String {
            (a..b)
                .filter_map(|i| match &toks[i].tok {
                    Tok::Ident(s) | Tok::Num(s) => Some(s.clone()),
                    Tok::Punct(p) => Some(p.to_string()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join(" ")
                .replace(" *", "*")
                .replace(" :: ", "::")
        };
        let mut i = 0;
        while i < toks.len() {
            match word(i) {
                Some("typedef") => {
                    let start = i + 1;
                    let mut j = start;
                    while j < toks.len() && !punct(j, ";") && !punct(j, "(") && !punct(j, "{") {
                        j += 1;
                    }
                    if punct(j, ";") && j >= start + 2 {
                        if let Some(name) = word(j - 1) {
                            self.aliases
                                .insert(name.to_string(), span_text(start, j - 1));
                        }
                    }
                    i = j;
                }
                Some("using") if word(i + 1).is_some() && punct(i + 2, "=") => {
                    let name = word(i + 1).unwrap_or_default().to_string();
                    let start = i + 3;
                    let mut j = start;
                    while j < toks.len() && !punct(j, ";") {
                        j += 1;
                    }
                    if j > start {
                        self.aliases.insert(name, span_text(start, j));
                    }
                    i = j;
                }
                Some("struct" | "class" | "union") => {
                    if let Some(name) = word(i + 1) {
                        if punct(i + 2, "{") || punct(i + 2, ":") {
                            self.classes.insert(name.to_string());
                        }
                    }
                    i += 1;
                }
                _ => i += 1,
            }
        }
    }

    /// `base` with aliases replaced until it names no alias (at most 16 steps): the declared
    /// form of the aliased type, whose pointers and `const` add to the parameter's.
    pub fn resolve(&self, base: &str) -> Declared {
        let mut d = declared(base);
        for _ in 0..16 {
            let Some(to) = self.aliases.get(&d.base) else {
                break;
            };
            let inner = declared(to);
            d = Declared {
                base: inner.base,
                pointers: d.pointers + inner.pointers,
                reference: d.reference || inner.reference,
                constant: d.constant || inner.constant,
            };
        }
        d
    }
}

/// The spec shape of a parameter type `ty` (normalised, see [`declared`]), with template
/// arguments substituted (`T` -> `float`) and the unit's aliases resolved.
pub fn shape(ty: &str, template: &HashMap<String, String>, types: &Types) -> Shape {
    let d = declared(ty);
    let base = match template.get(&d.base) {
        Some(arg) => arg.clone(),
        None => d.base.clone(),
    };
    let r = types.resolve(&base);
    let d = Declared {
        base: r.base,
        pointers: d.pointers + r.pointers,
        reference: d.reference || r.reference,
        constant: d.constant || r.constant,
    };
    if d.reference {
        return Shape::Unsupported(format!(
            "`{ty}` is a reference, which a kernel launch cannot pass"
        ));
    }
    if d.pointers > 1 {
        return Shape::Unsupported(format!(
            "`{ty}` is a pointer to pointers, which a spec cannot describe"
        ));
    }
    if HALF.contains(&d.base.as_str()) {
        return Shape::Unsupported(format!(
            "`{}` is half precision, which no spec element type holds (i8 to u64, f32, f64)",
            d.base
        ));
    }
    let known = scalar_elem(&d.base)
        .map(|e| (e, 1))
        .or_else(|| vector_elem(&d.base));
    match (d.pointers, known) {
        (1, Some((elem, lanes))) => Shape::Buffer {
            elem,
            lanes,
            constant: d.constant,
        },
        (1, None) => Shape::UnknownBuffer {
            constant: d.constant,
        },
        (_, Some((elem, 1))) => Shape::Scalar { elem },
        (_, Some((_, lanes))) => Shape::Unsupported(format!(
            "`{}` is a vector of {lanes} passed by value, which a spec cannot describe (scalars are one number)",
            d.base
        )),
        (_, None) if types.classes.contains(&d.base) => {
            Shape::Unsupported(format!(
                "`{}` is a struct passed by value, which a spec cannot describe (its arguments are scalars and buffers)",
                d.base
            ))
        }
        (_, None) => Shape::UnknownScalar,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_parameter_types() {
        let no = HashMap::new();
        let mut types = Types::default();
        types.scan(
            b"typedef unsigned int myuint;\nusing idx_t = long long;\ntypedef float* fptr;\nstruct Params { int n; };\n",
        );
        let s = |t: &str| shape(t, &no, &types);
        assert_eq!(
            s("const float*"),
            Shape::Buffer {
                elem: Elem::F32,
                lanes: 1,
                constant: true
            }
        );
        assert_eq!(
            s("float const*"),
            Shape::Buffer {
                elem: Elem::F32,
                lanes: 1,
                constant: true
            }
        );
        assert_eq!(
            s("float4*"),
            Shape::Buffer {
                elem: Elem::F32,
                lanes: 4,
                constant: false
            }
        );
        assert_eq!(s("float[]"), s("float*"));
        assert_eq!(s("long"), Shape::Scalar { elem: Elem::I64 });
        assert_eq!(s("size_t"), Shape::Scalar { elem: Elem::U64 });
        assert_eq!(s("std::int64_t"), Shape::Scalar { elem: Elem::I64 });
        assert_eq!(s("unsigned int"), Shape::Scalar { elem: Elem::U32 });
        assert_eq!(s("myuint"), Shape::Scalar { elem: Elem::U32 });
        assert_eq!(s("idx_t"), Shape::Scalar { elem: Elem::I64 });
        assert!(matches!(
            s("fptr"),
            Shape::Buffer {
                elem: Elem::F32,
                ..
            }
        ));
        assert!(matches!(s("Params"), Shape::Unsupported(m) if m.contains("struct")));
        assert!(matches!(s("__half*"), Shape::Unsupported(m) if m.contains("half precision")));
        assert!(matches!(s("float**"), Shape::Unsupported(m) if m.contains("pointers")));
        assert!(matches!(s("float&"), Shape::Unsupported(m) if m.contains("reference")));
        assert_eq!(s("Mystery"), Shape::UnknownScalar);
        assert_eq!(s("void*"), Shape::UnknownBuffer { constant: false });
        let t: HashMap<String, String> = [("T".to_string(), "double".to_string())].into();
        assert!(matches!(
            shape("const T*", &t, &types),
            Shape::Buffer {
                elem: Elem::F64,
                constant: true,
                ..
            }
        ));
        assert_eq!(
            split_signature("(const float*, Pair<int, float>, int)"),
            ["const float*", "Pair<int, float>", "int"]
        );
        assert!(split_signature("()").is_empty());
        assert!(split_signature("(void)").is_empty());
    }
}
