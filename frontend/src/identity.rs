//! Loop and function identity: the one id of every function and loop of a parsed file
//! (`FUNCTION:INDEX`, e.g. `a::k:0`, `over(float*, int):1`), computed once per parse, and the
//! resolution of what users type (`--loop 12`, `--loop a::k:0`, the short `--loop k:0`).
//!
//! FUNCTION is the qualified name with the enclosing namespaces and classes the lowering sees
//! (`a::k`, `(anonymous namespace)::k`, `S::m`), followed, only when that name is not unique in
//! the file, by the shortest disambiguator that makes it unique: the template arguments written
//! in the name of an explicit specialisation or an out-of-line member of a class template
//! (`k<float>`, `S<T>::m`); else the normalised parameter types (`over(float*, int)`); else, for
//! definitions that are still identical (both branches of an `#if`), an ordinal in source order
//! (`k(float*)#2`). INDEX is the loop's position among the function's loops in source order,
//! outer before inner. No line number is part of an id, so an id survives edits elsewhere in
//! the file (adding an overload of the same name does add disambiguators to its namesakes).

use std::collections::HashMap;

pub use crate::id::{Candidate, FunctionId, LookupError, LoopId, LoopLoc, LoopRef};
use crate::ir::{Function, Loop, SourceFile};

impl SourceFile {
    /// The id of the loop at `loc`. Panics when `loc` is not a loop of this file.
    pub fn loop_id(&self, loc: LoopLoc) -> LoopId {
        let f = &self.functions[loc.function];
        assert!(loc.index < f.loops.len(), "no loop {loc:?}");
        LoopId {
            function: f.id.clone(),
            index: loc.index,
        }
    }

    /// Every loop of every function, in source order of the functions.
    pub fn all_loops(&self) -> impl Iterator<Item = (LoopLoc, &Function, &Loop)> {
        self.functions.iter().enumerate().flat_map(|(fi, f)| {
            f.loops.iter().enumerate().map(move |(li, l)| {
                (
                    LoopLoc {
                        function: fi,
                        index: li,
                    },
                    f,
                    l,
                )
            })
        })
    }

    fn candidate(&self, loc: LoopLoc) -> Candidate {
        Candidate {
            id: self.loop_id(loc).to_string(),
            line: self.functions[loc.function].loops[loc.index].keyword.line,
        }
    }

    /// The loop a user's reference names. A line names the loop whose keyword is on it; an id
    /// is matched against the ids of this parse (whitespace aside), and a shorter function part
    /// (`k` or `ns::k` for `a::ns::k`, `over` for `over(int*)`) only when it names one loop.
    pub fn resolve(&self, r: &LoopRef) -> Result<LoopLoc, LookupError> {
        match r {
            LoopRef::Line(line) => {
                let hits: Vec<LoopLoc> = self
                    .all_loops()
                    .filter(|(_, _, l)| l.keyword.line == *line)
                    .map(|(loc, _, _)| loc)
                    .collect();
                match hits.len() {
                    1 => Ok(hits[0]),
                    0 => {
                        let mut all: Vec<LoopLoc> =
                            self.all_loops().map(|(loc, _, _)| loc).collect();
                        all.sort_by_key(|loc| {
                            let l = self.functions[loc.function].loops[loc.index].keyword.line;
                            (l.abs_diff(*line), l)
                        });
                        // The innermost loop holding the line: the latest to start.
                        let inside = self
                            .all_loops()
                            .filter(|(_, _, l)| l.keyword.line < *line && *line <= l.end_line)
                            .max_by_key(|(_, _, l)| (l.keyword.line, l.keyword.column, l.depth))
                            .map(|(loc, _, _)| self.candidate(loc));
                        Err(LookupError::NoLoopAtLine {
                            line: *line,
                            inside,
                            candidates: all.into_iter().map(|l| self.candidate(l)).collect(),
                        })
                    }
                    _ => Err(LookupError::AmbiguousLine {
                        line: *line,
                        candidates: hits.into_iter().map(|l| self.candidate(l)).collect(),
                    }),
                }
            }
            LoopRef::Id { function, index } => self.resolve_id(function, *index),
        }
    }

    fn resolve_id(&self, function: &str, index: usize) -> Result<LoopLoc, LookupError> {
        let want = squash(function);
        let exact: Vec<usize> = (0..self.functions.len())
            .filter(|&fi| squash(self.functions[fi].id.as_str()) == want)
            .collect();
        let matched: Vec<usize> = if exact.is_empty() {
            (0..self.functions.len())
                .filter(|&fi| names_loosely(&self.functions[fi], &want))
                .collect()
        } else {
            exact
        };
        let named: Vec<LoopLoc> = matched
            .iter()
            .filter(|&&fi| index < self.functions[fi].loops.len())
            .map(|&fi| LoopLoc {
                function: fi,
                index,
            })
            .collect();
        match (named.len(), matched.len()) {
            (1, _) => Ok(named[0]),
            (0, 0) => Err(LookupError::UnknownFunction {
                function: function.to_string(),
                candidates: self
                    .all_loops()
                    .map(|(loc, _, _)| self.candidate(loc))
                    .collect(),
            }),
            (0, _) => {
                let candidates: Vec<Candidate> = matched
                    .iter()
                    .flat_map(|&fi| {
                        (0..self.functions[fi].loops.len()).map(move |li| LoopLoc {
                            function: fi,
                            index: li,
                        })
                    })
                    .map(|loc| self.candidate(loc))
                    .collect();
                if matched.len() == 1 {
                    Err(LookupError::NoSuchLoop {
                        function: self.functions[matched[0]].id.to_string(),
                        index,
                        count: self.functions[matched[0]].loops.len(),
                        candidates,
                    })
                } else {
                    Err(LookupError::AmbiguousId {
                        wanted: format!("{function}:{index}"),
                        candidates,
                    })
                }
            }
            _ => Err(LookupError::AmbiguousId {
                wanted: format!("{function}:{index}"),
                candidates: named.into_iter().map(|l| self.candidate(l)).collect(),
            }),
        }
    }
}

/// `want` (whitespace removed) names `f` without being its full id: its qualified name, a
/// `::`-suffix of it, or its qualified name with the disambiguator the id would carry.
fn names_loosely(f: &Function, want: &str) -> bool {
    let q = squash(&f.qualified_name);
    if q == want || q.ends_with(&format!("::{want}")) {
        return true;
    }
    let id = squash(f.id.as_str());
    id.ends_with(&format!("::{want}"))
}

fn squash(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// Joins tokens the way ids are written: a space only between two words and after a comma
/// (`const float*`, `unsigned int`, `k<float, 4>`, `std::array<int, 4>&`).
pub(crate) fn join_tokens<'a>(tokens: impl IntoIterator<Item = &'a str>) -> String {
    let mut out = String::new();
    let word = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    for t in tokens {
        let t = t.trim();
        if t.is_empty() {
            continue;
        }
        if let (Some(prev), Some(first)) = (out.chars().last(), t.chars().next()) {
            if (word(prev) && word(first)) || prev == ',' {
                out.push(' ');
            }
        }
        out.push_str(t);
    }
    out
}

/// Splits source text into tokens (words, numbers, single punctuation characters; `::` and
/// `...` kept whole), dropping comments, for [`join_tokens`].
pub(crate) fn tokens(text: &str) -> Vec<&str> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i = text[i + 2..].find("*/").map_or(b.len(), |k| i + 2 + k + 2);
        } else if c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80 {
            let s = i;
            while i < b.len()
                && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'$' || b[i] >= 0x80)
            {
                i += 1;
            }
            out.push(&text[s..i]);
        } else if text[i..].starts_with("::") {
            out.push("::");
            i += 2;
        } else if text[i..].starts_with("...") {
            out.push("...");
            i += 3;
        } else {
            // One ASCII punctuation character (multi-byte characters are handled above).
            out.push(&text[i..i + 1]);
            i += 1;
        }
    }
    out
}

/// `ns::f<T, U<V>>` -> `ns::f`; an operator name keeps its symbols (`S::operator<`).
pub(crate) fn strip_template_args(s: &str) -> String {
    let (head, op) = match s.find("operator") {
        Some(i) if s[..i].is_empty() || s[..i].ends_with("::") => (&s[..i], &s[i..]),
        _ => (s, ""),
    };
    let mut out = String::with_capacity(s.len());
    let mut depth = 0usize;
    for ch in head.chars() {
        match ch {
            '<' => depth += 1,
            '>' if depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(ch),
            _ => {}
        }
    }
    out.push_str(op);
    out
}

/// `a::B<c::D, 2>::e` -> `a`, `B<c::D, 2>`, `e`: the names of a qualified name, split at the
/// `::` outside template arguments (an operator name kept whole), a leading `::` and
/// `typename` left out.
pub fn qualified_segments(q: &str) -> Vec<&str> {
    let q = q.trim();
    let q = q
        .strip_prefix("typename ")
        .unwrap_or(q)
        .trim_start_matches("::");
    let (head, op) = match q.find("operator") {
        Some(i) if q[..i].ends_with("::") => (&q[..i - 2], Some(&q[i..])),
        _ => (q, None),
    };
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    let b = head.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'<' => depth += 1,
            b'>' if depth > 0 => depth -= 1,
            b':' if depth == 0 && b.get(i + 1) == Some(&b':') => {
                out.push(head[start..i].trim());
                start = i + 2;
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    out.push(head[start..].trim());
    out.extend(op);
    out
}

/// `with_args` (a qualified name with its template arguments as written) when the classes
/// before its last name carry template arguments (`Traits<float>::Reducer::run`,
/// `Box<T>::get`); `None` otherwise (`ns::f<T>`, `S::m`).
pub(crate) fn class_args_written(with_args: &str) -> Option<String> {
    let segments = qualified_segments(with_args);
    let (_, classes) = segments.split_last()?;
    classes
        .iter()
        .any(|c| c.contains('<'))
        .then(|| with_args.to_string())
}

/// What the lowering knows of one function for its id.
pub(crate) struct IdParts {
    /// Qualified name with the template arguments as written (`S<T>::m`, `k<float>`).
    pub with_args: String,
    /// Normalised parameter types, `(float*, int)`; `None` when unknown (recovered functions).
    pub signature: Option<String>,
}

/// Gives every function its id (see the module documentation). `parts[i]` belongs to
/// `functions[i]`; the functions are in source order.
pub(crate) fn assign_ids(functions: &mut [Function], parts: &[IdParts]) {
    let n = functions.len();
    let mut by_name: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, f) in functions.iter().enumerate() {
        by_name
            .entry(f.qualified_name.as_str())
            .or_default()
            .push(i);
    }
    let mut ids: Vec<String> = vec![String::new(); n];
    for group in by_name.values() {
        if group.len() == 1 {
            ids[group[0]] = functions[group[0]].qualified_name.clone();
            continue;
        }
        // Level 1: the name with its template arguments, for the members it makes unique.
        let level1 = |i: usize| parts[i].with_args.as_str();
        let mut count1: HashMap<&str, usize> = HashMap::new();
        for &i in group {
            *count1.entry(level1(i)).or_default() += 1;
        }
        // Level 2: plus the parameter types.
        let level2 = |i: usize| match &parts[i].signature {
            Some(sig) => format!("{}{sig}", parts[i].with_args),
            None => parts[i].with_args.clone(),
        };
        let mut count2: HashMap<String, usize> = HashMap::new();
        for &i in group {
            if count1[level1(i)] > 1 {
                *count2.entry(level2(i)).or_default() += 1;
            }
        }
        let mut ordinal: HashMap<String, usize> = HashMap::new();
        for &i in group {
            ids[i] = if count1[level1(i)] == 1 {
                level1(i).to_string()
            } else {
                let key = level2(i);
                if count2[&key] == 1 {
                    key
                } else {
                    let k = ordinal.entry(key.clone()).or_default();
                    *k += 1;
                    format!("{key}#{k}")
                }
            };
        }
    }
    // Whatever the names hold, ids are unique: any clash left gets an ordinal.
    let mut seen: HashMap<String, usize> = HashMap::new();
    for id in &ids {
        *seen.entry(id.clone()).or_default() += 1;
    }
    let mut k: HashMap<String, usize> = HashMap::new();
    for id in ids.iter_mut() {
        if seen[id.as_str()] > 1 {
            let c = k.entry(id.clone()).or_default();
            *c += 1;
            *id = format!("{id}#{c}");
        }
    }
    for (f, id) in functions.iter_mut().zip(ids) {
        f.id = FunctionId::new(id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_arguments_as_written() {
        let w = |s: &str| class_args_written(s);
        assert_eq!(
            w("Traits<float>::Reducer::run").as_deref(),
            Some("Traits<float>::Reducer::run")
        );
        assert_eq!(w("Box<T>::get").as_deref(), Some("Box<T>::get"));
        assert_eq!(w("S<int>::operator<").as_deref(), Some("S<int>::operator<"));
        assert_eq!(w("ns::k<a::B>"), None);
        assert_eq!(w("ns::S::m"), None);
        assert_eq!(w("S::operator<"), None);
        assert_eq!(w("f"), None);
    }

    #[test]
    fn parses_loop_refs() {
        assert_eq!("12".parse::<LoopRef>().unwrap(), LoopRef::Line(12));
        assert_eq!(
            "saxpy:1".parse::<LoopRef>().unwrap(),
            LoopRef::Id {
                function: "saxpy".into(),
                index: 1
            }
        );
        assert_eq!(
            "ns::k:0".parse::<LoopRef>().unwrap(),
            LoopRef::Id {
                function: "ns::k".into(),
                index: 0
            }
        );
        assert_eq!(
            "over(float*, int):3".parse::<LoopRef>().unwrap(),
            LoopRef::Id {
                function: "over(float*, int)".into(),
                index: 3
            }
        );
        assert_eq!(
            "(anonymous namespace)::k(float*)#2:0"
                .parse::<LoopRef>()
                .unwrap(),
            LoopRef::Id {
                function: "(anonymous namespace)::k(float*)#2".into(),
                index: 0
            }
        );
        for bad in ["k:x", "ns::", "k:", ":0", "k::0", "99999999999", "", "k:-1"] {
            assert!(bad.parse::<LoopRef>().is_err(), "{bad}");
        }
    }

    #[test]
    fn joins_tokens() {
        assert_eq!(join_tokens(tokens("const  float *")), "const float*");
        assert_eq!(join_tokens(tokens("unsigned   int")), "unsigned int");
        assert_eq!(
            join_tokens(tokens("std :: array< int ,4 > &")),
            "std::array<int, 4>&"
        );
        assert_eq!(join_tokens(tokens("T /* x */ ...")), "T...");
        assert_eq!(strip_template_args("S<T>::k<float>"), "S::k");
        assert_eq!(strip_template_args("S<T>::operator<"), "S::operator<");
        assert_eq!(strip_template_args("operator<<"), "operator<<");
    }
}
