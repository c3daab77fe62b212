//! PTX text as clang writes it: the `.version`, the `.target`, and each kernel's `.entry` name
//! with its `.param` list (sizes and alignments; PTX keeps no C++ types, so pointers and 64-bit
//! integers are both `.u64`).

/// One kernel parameter of a `.entry`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PtxParam {
    pub name: String,
    /// `u64`, `u32`, `f32`, `b8` (aggregates are `.b8 name[N]`).
    pub ty: String,
    pub size: u32,
    pub align: u32,
    /// Marked `.ptr` (clang marks some pointer parameters so).
    pub is_ptr: bool,
}

/// One `.entry`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PtxEntry {
    pub name: String,
    pub params: Vec<PtxParam>,
}

/// What a PTX module declares.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PtxModule {
    /// `.version 7.8` -> "7.8".
    pub version: Option<String>,
    /// `.target sm_80` -> "sm_80".
    pub target: Option<String>,
    pub entries: Vec<PtxEntry>,
}

impl PtxModule {
    /// The compute capability the module needs, `sm_86` -> (8, 6).
    pub fn compute_capability(&self) -> Option<(u32, u32)> {
        let t = self.target.as_deref()?.split(',').next()?.trim();
        let digits = t
            .strip_prefix("sm_")?
            .trim_end_matches(|c: char| c.is_ascii_alphabetic());
        let n: u32 = digits.parse().ok()?;
        Some((n / 10, n % 10))
    }
}

/// Parse the declarations of a PTX module; the error names the malformed part.
pub fn parse(text: &str) -> Result<PtxModule, String> {
    let mut m = PtxModule::default();
    let text = strip_comments(text);
    for line in text.lines() {
        let l = line.trim();
        if let Some(v) = l.strip_prefix(".version") {
            m.version = Some(v.trim().to_string());
        } else if let Some(t) = l.strip_prefix(".target") {
            m.target = Some(t.trim().to_string());
        }
    }
    let mut rest = text.as_str();
    while let Some(at) = find_entry(rest) {
        let after = &rest[at + ".entry".len()..];
        let open = after.find('(');
        let brace = after.find('{');
        let name_end = [open, brace, after.find(';')]
            .into_iter()
            .flatten()
            .min()
            .ok_or("`.entry` without a body")?;
        let name = after[..name_end].trim().to_string();
        if name.is_empty() {
            return Err("`.entry` without a name".into());
        }
        let mut params = Vec::new();
        let mut consumed = name_end;
        if open == Some(name_end) {
            let close = after[name_end..]
                .find(')')
                .ok_or_else(|| format!("{name}: unclosed parameter list"))?
                + name_end;
            for p in after[name_end + 1..close].split(',') {
                let p = p.trim();
                if !p.is_empty() {
                    params.push(param(p).map_err(|e| format!("{name}: {e}"))?);
                }
            }
            consumed = close;
        }
        m.entries.push(PtxEntry { name, params });
        rest = &after[consumed..];
    }
    Ok(m)
}

/// The next `.entry` directive (as a whole word) in `s`.
fn find_entry(s: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = s[from..].find(".entry") {
        let at = from + i;
        let next = s.as_bytes().get(at + 6).copied().unwrap_or(b' ');
        if next.is_ascii_whitespace() {
            return Some(at);
        }
        from = at + 6;
    }
    None
}

fn param(p: &str) -> Result<PtxParam, String> {
    let words: Vec<&str> = p.split_whitespace().collect();
    if words.first() != Some(&".param") {
        return Err(format!("unexpected parameter `{p}`"));
    }
    let mut ty = None;
    let mut align = None;
    let mut is_ptr = false;
    let mut name = None;
    let mut i = 1;
    while i < words.len() {
        let w = words[i];
        match w {
            ".align" => {
                align = Some(
                    words
                        .get(i + 1)
                        .and_then(|a| a.parse::<u32>().ok())
                        .ok_or_else(|| format!("bad .align in `{p}`"))?,
                );
                i += 1;
            }
            ".ptr" => is_ptr = true,
            ".global" | ".shared" | ".const" | ".local" => {}
            _ if w.starts_with('.') => ty = Some(w[1..].to_string()),
            _ => name = Some(w.to_string()),
        }
        i += 1;
    }
    let ty = ty.ok_or_else(|| format!("no type in `{p}`"))?;
    let name = name.ok_or_else(|| format!("no name in `{p}`"))?;
    let width: u32 = ty[1..]
        .parse::<u32>()
        .map_err(|_| format!("unknown type .{ty} in `{p}`"))?
        / 8;
    let (name, count) = match name.split_once('[') {
        Some((n, c)) => (
            n.to_string(),
            c.trim_end_matches(']')
                .parse::<u32>()
                .map_err(|_| format!("bad array size in `{p}`"))?,
        ),
        None => (name, 1),
    };
    Ok(PtxParam {
        name,
        size: width.max(1) * count,
        align: align.unwrap_or(width.max(1)),
        ty,
        is_ptr,
    })
}

fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        let line = rest.find("//");
        let block = rest.find("/*");
        match (line, block) {
            (Some(l), b) if b.is_none_or(|b| l < b) => {
                out.push_str(&rest[..l]);
                rest = rest[l..].find('\n').map_or("", |e| &rest[l + e..]);
            }
            (_, Some(b)) => {
                out.push_str(&rest[..b]);
                rest = rest[b..].find("*/").map_or("", |e| &rest[b + e + 2..]);
                out.push(' ');
            }
            _ => {
                out.push_str(rest);
                return out;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_entries_and_params() {
        let text = "//\n// Generated by LLVM NVPTX Back-End\n//\n\n.version 7.8\n.target sm_90\n.address_size 64\n\n\t// .globl\t_Z1kPfi\n.visible .entry _Z1kPfi(\n\t.param .u64 .ptr .global .align 4 _Z1kPfi_param_0,\n\t.param .u32 _Z1kPfi_param_1,\n\t.param .align 4 .b8 _Z1kPfi_param_2[12]\n)\n{\n ret;\n}\n.entry noargs()\n{\n}\n";
        let m = parse(text).unwrap();
        assert_eq!(m.version.as_deref(), Some("7.8"));
        assert_eq!(m.compute_capability(), Some((9, 0)));
        assert_eq!(m.entries.len(), 2);
        let e = &m.entries[0];
        assert_eq!(e.name, "_Z1kPfi");
        assert_eq!(
            e.params
                .iter()
                .map(|p| (p.ty.as_str(), p.size, p.align, p.is_ptr))
                .collect::<Vec<_>>(),
            [
                ("u64", 8, 4, true),
                ("u32", 4, 4, false),
                ("b8", 12, 4, false)
            ]
        );
        assert!(m.entries[1].params.is_empty());
    }
}
