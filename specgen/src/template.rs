//! Template kernels: the parameters of a function template's header (`template <typename T, int
//! R = 4>`), the arguments of the instantiation a kernel name gives (`stencil<4>`), the binding
//! of one to the other, and the explicit instantiations a file spells (`template __global__
//! void stencil<4>(...);`). Read from the source text with the workspace's lexer.

use crate::ctype::split_top;
use frontend::lex::{tokenize, Tok, Token};
use std::collections::HashMap;

/// One template parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateParam {
    pub name: String,
    /// `typename T` / `class T` (as opposed to a value: `int R`, `const uint BM`).
    pub is_type: bool,
    /// The default argument as written (`= 4`).
    pub default: Option<String>,
}

/// The template parameters of the function whose definition starts at `start` in `src` (the
/// function's span begins with its template header); empty when it has none.
pub fn params(src: &[u8], start: usize, end: usize) -> Vec<TemplateParam> {
    let toks = tokenize(src, start..end.min(src.len()));
    let is =
        |i: usize, w: &str| matches!(toks.get(i).map(|t| &t.tok), Some(Tok::Ident(s)) if s == w);
    if !is(0, "template") {
        return Vec::new();
    }
    let Some(close) = matching_angle(&toks, 1) else {
        return Vec::new();
    };
    let text = join(src, &toks[2..close]);
    split_top(&text, ',')
        .into_iter()
        .filter_map(|p| {
            let (decl, default) = match split_top(&p, '=').as_slice() {
                [d, v, ..] => (d.trim().to_string(), Some(v.trim().to_string())),
                [d] => (d.trim().to_string(), None),
                [] => return None,
            };
            let words: Vec<&str> = decl
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .filter(|w| !w.is_empty())
                .collect();
            let name = words.last()?.to_string();
            let is_type = matches!(words.first(), Some(&"typename") | Some(&"class"));
            Some(TemplateParam {
                name,
                is_type,
                default,
            })
        })
        .collect()
}

/// The index of the `>` closing the `<` at `open` (nested `<>` and `()` counted).
fn matching_angle(toks: &[Token], open: usize) -> Option<usize> {
    if !matches!(toks.get(open).map(|t| &t.tok), Some(Tok::Punct("<"))) {
        return None;
    }
    let mut depth = 0i32;
    let mut paren = 0i32;
    for (i, t) in toks.iter().enumerate().skip(open) {
        match t.tok {
            Tok::Punct("(") => paren += 1,
            Tok::Punct(")") => paren -= 1,
            Tok::Punct("<") if paren == 0 => depth += 1,
            Tok::Punct(">") if paren == 0 => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            Tok::Punct(">>") if paren == 0 => {
                depth -= 2;
                if depth <= 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The source text of a token run: a space between two words and after a comma, none
/// elsewhere (`Pair<int, 2>`, `const uint BM`).
fn join(src: &[u8], toks: &[Token]) -> String {
    let mut out = String::new();
    let mut prev: Option<&Tok> = None;
    for t in toks {
        let word = |k: &Tok| matches!(k, Tok::Ident(_) | Tok::Num(_));
        let space = match prev {
            Some(p) => (word(p) && word(&t.tok)) || matches!(p, Tok::Punct(",")),
            None => false,
        };
        if space {
            out.push(' ');
        }
        out.push_str(&String::from_utf8_lossy(&src[t.range.clone()]));
        prev = Some(&t.tok);
    }
    out
}

/// The template arguments of a kernel name as a user writes it (`stencil<4>` -> `["4"]`,
/// `ns::k<float, 8>` -> `["float", "8"]`); `None` when it names no instantiation.
pub fn name_args(kernel: &str) -> Option<Vec<String>> {
    let k = kernel.trim();
    if !k.ends_with('>') {
        return None;
    }
    let open = {
        let mut depth = 0i32;
        let mut at = None;
        for (i, c) in k.char_indices().rev() {
            match c {
                '>' => depth += 1,
                '<' => {
                    depth -= 1;
                    if depth == 0 {
                        at = Some(i);
                        break;
                    }
                }
                _ => {}
            }
        }
        at?
    };
    Some(
        split_top(&k[open + 1..k.len() - 1], ',')
            .into_iter()
            .map(|a| a.trim().to_string())
            .filter(|a| !a.is_empty())
            .collect(),
    )
}

/// `params` bound to `args` by position, defaults filling the rest; `Err` names what is wrong
/// (too many arguments, a parameter with neither argument nor default).
pub fn bind(params: &[TemplateParam], args: &[String]) -> Result<HashMap<String, String>, String> {
    if args.len() > params.len() {
        return Err(format!(
            "{} template argument(s) for {} parameter(s) ({})",
            args.len(),
            params.len(),
            params
                .iter()
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let mut out = HashMap::new();
    for (i, p) in params.iter().enumerate() {
        let v = match (args.get(i), &p.default) {
            (Some(a), _) => a.clone(),
            (None, Some(d)) => d.clone(),
            (None, None) => {
                return Err(format!(
                    "template parameter `{}` has no argument and no default",
                    p.name
                ))
            }
        };
        out.insert(p.name.clone(), v);
    }
    Ok(out)
}

/// The explicit instantiations of `name` that `src` spells (`template __global__ void
/// stencil<4>(const float*, float*, const float*, int);`): each one's template arguments as
/// written, in source order, each once.
pub fn explicit_instances(src: &[u8], name: &str) -> Vec<String> {
    let toks = tokenize(src, 0..src.len());
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let is_template = matches!(&toks[i].tok, Tok::Ident(s) if s == "template");
        let next_is_angle = matches!(toks.get(i + 1).map(|t| &t.tok), Some(Tok::Punct("<")));
        if !is_template || next_is_angle {
            i += 1;
            continue;
        }
        // An explicit instantiation runs to its `;` (a definition's `{` ends the search).
        let mut j = i + 1;
        while j < toks.len() && !matches!(toks[j].tok, Tok::Punct(";") | Tok::Punct("{")) {
            let named = matches!(&toks[j].tok, Tok::Ident(s) if s == name);
            if named {
                if let Some(close) = matching_angle(&toks, j + 1) {
                    let args = join(src, &toks[j + 2..close]);
                    if !out.contains(&args) {
                        out.push(args);
                    }
                    j = close;
                }
            }
            j += 1;
        }
        i = j + 1;
    }
    out
}

/// The instantiations of `name` that `src` launches: `name<ARGS><<<...>>>` and the kernel
/// argument of `hipLaunchKernelGGL(name<ARGS>, ...)` (also parenthesised or in
/// `HIP_KERNEL_NAME(...)`), each one's template arguments as written, in source order, each
/// once. A launch inside a template host function may spell its parameters (`name<T>`).
pub fn launched_instances(src: &[u8], name: &str) -> Vec<String> {
    let toks = tokenize(src, 0..src.len());
    let tok = |i: usize| toks.get(i).map(|t| &t.tok);
    let mut out: Vec<String> = Vec::new();
    for j in 0..toks.len() {
        if !matches!(tok(j), Some(Tok::Ident(s)) if s == name) {
            continue;
        }
        let Some(close) = matching_angle(&toks, j + 1) else {
            continue;
        };
        let chevrons = matches!(
            (tok(close + 1), tok(close + 2)),
            (Some(Tok::Punct("<<")), Some(Tok::Punct("<")))
        );
        // Back over `(` and `HIP_KERNEL_NAME(` to the launch macro.
        let mut k = j;
        while k > 0 {
            match tok(k - 1) {
                Some(Tok::Punct("(")) => k -= 1,
                Some(Tok::Ident(s)) if s == "HIP_KERNEL_NAME" => k -= 1,
                _ => break,
            }
        }
        let ggl = k > 0
            && k < j
            && matches!(tok(k - 1), Some(Tok::Ident(s)) if s == "hipLaunchKernelGGL");
        if chevrons || ggl {
            let args = join(src, &toks[j + 2..close]);
            if !out.contains(&args) {
                out.push(args);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_headers_names_and_instances() {
        let src = b"template <typename T, const uint BM, int R = 4>\n__global__ void k(T* p) {}\ntemplate __global__ void k<float, 64>(float*);\ntemplate __global__ void k<double, 8, 2>(double*);\n";
        let p = params(src, 0, src.len());
        assert_eq!(
            p.iter()
                .map(|p| (p.name.as_str(), p.is_type, p.default.as_deref()))
                .collect::<Vec<_>>(),
            [
                ("T", true, None),
                ("BM", false, None),
                ("R", false, Some("4"))
            ]
        );
        assert_eq!(name_args("ns::k<float, 64>").unwrap(), ["float", "64"]);
        assert_eq!(
            name_args("k<Pair<int, 2>, 8>").unwrap(),
            ["Pair<int, 2>", "8"]
        );
        assert!(name_args("k").is_none());
        let b = bind(&p, &["float".into(), "64".into()]).unwrap();
        assert_eq!(
            (b["T"].as_str(), b["BM"].as_str(), b["R"].as_str()),
            ("float", "64", "4")
        );
        assert!(bind(&p, &["float".into()]).unwrap_err().contains("`BM`"));
        assert_eq!(explicit_instances(src, "k"), ["float, 64", "double, 8, 2"]);
        let host = b"void go(float* p) {\n  k<float, 64><<<1, 64>>>(p);\n  hipLaunchKernelGGL(k<double, 8>, 1, 1, 0, 0, q);\n  hipLaunchKernelGGL(HIP_KERNEL_NAME(k<int, 2, 2>), 1, 1, 0, 0, r);\n  k<float, 64><<<2, 64>>>(p);\n  auto f = k<char, 1>;\n  if (a < b && c > d) {}\n}\n";
        assert_eq!(
            launched_instances(host, "k"),
            ["float, 64", "double, 8", "int, 2, 2"]
        );
        assert!(params(b"__global__ void k() {}", 0, 22).is_empty());
    }
}
