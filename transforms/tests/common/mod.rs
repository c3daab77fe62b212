//! Shared by the differential tests: a generator of canonical loops as HIP kernels, and a g++
//! harness that runs originals against their unrolled variants on the host.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use transforms::{LoopLoc, Mode};

/// The repository's `testdata/transforms` directory.
pub fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/transforms")
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepSpec {
    /// A constant step, written in one of the update forms below.
    Const(u8),
    /// `i += st` / `i -= st` with `const S st = (S)p_step;` (the runner tries several steps).
    Param(&'static str),
    /// `i += blockDim.x * gridDim.x` (grid-stride, ascending only).
    GridStride,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stmt {
    /// `float t = in[hu_slot(i)] * 0.5f; acc += t;`: a body-local declaration.
    Local,
    /// `if (hu_skip(i)) continue;`
    Continue,
    /// `acc = acc * 0.75f + in[hu_slot(i)];`: order-sensitive float accumulation.
    FloatAcc,
    /// An inner loop with its own `continue` (which must stay the inner loop's).
    InnerLoop,
    /// `out[hu_slot(i * 3 + 1)] -= 0.25f;`: the variable inside a larger expression.
    Store,
    /// `{ int i2 = (int)(i % 5); acc += (float)i2; }`: a nested block with a local.
    Block,
    /// A `switch` on `i` whose `case` continues the loop (a `continue` inside a `switch`).
    SwitchContinue,
    /// `HU_MACC(i);`: a function-like macro of the file that writes `acc` and reads `in[i]`.
    Macro,
}

#[derive(Debug, Clone)]
pub struct LoopSpec {
    /// Induction variable type and its (bits, signed).
    pub ty: &'static str,
    pub bits: u32,
    pub signed: bool,
    /// Type of the bound variable (`None`: same as the induction variable).
    pub bound_ty: Option<&'static str>,
    pub up: bool,
    pub inclusive: bool,
    /// `i < hi` rather than `hi > i`.
    pub var_left: bool,
    pub step: StepSpec,
    /// 0: `i += s` / `++i` forms vary with this.
    pub update_form: u8,
    pub decl_outside: bool,
    /// With `decl_outside`: assign before the loop and leave the init clause empty.
    pub empty_init: bool,
    pub thread_offset: bool,
    /// Put the loop inside `for (int rep = 0; rep < 2; ++rep) { ... }` (unroll the inner loop).
    pub wrap_outer: bool,
    pub body: Vec<Stmt>,
    pub factor: u32,
    /// Write the kernel as `template <class J>` with `J` as the induction type, instantiated
    /// with `ty` (exercises the type-generic guard).
    pub template: bool,
}

pub const TYPES: &[(&str, u32, bool)] = &[
    ("int", 32, true),
    ("unsigned", 32, false),
    ("long", 64, true),
    ("size_t", 64, false),
    ("unsigned short", 16, false),
    ("short", 16, true),
];

impl LoopSpec {
    fn update(&self) -> String {
        let op = if self.up { '+' } else { '-' };
        match self.step {
            StepSpec::Const(1) => match self.update_form % 4 {
                0 => format!("{op}{op}i"),
                1 => format!("i{op}{op}"),
                2 => format!("i {op}= 1"),
                _ => format!("i = i {op} 1"),
            },
            StepSpec::Const(s) => match self.update_form % 2 {
                0 => format!("i {op}= {s}"),
                _ => format!("i = i {op} {s}"),
            },
            StepSpec::Param(_) => format!("i {op}= st"),
            StepSpec::GridStride => "i += blockDim.x * gridDim.x".to_string(),
        }
    }

    /// The kernel `name` with the loop (loop index 0, or 1 when wrapped in an outer loop).
    pub fn kernel(&self, name: &str) -> String {
        let t = if self.template { "J" } else { self.ty };
        let bt = self.bound_ty.unwrap_or(t);
        let mut s = String::new();
        if self.body.contains(&Stmt::Macro) {
            s += "#define HU_MACC(x) acc = acc * 0.5f + in[hu_slot(x)]\n";
        }
        if self.template {
            s += "template <class J>\n";
        }
        s += &format!(
            "__global__ void {name}(unsigned long long p_lo, unsigned long long p_hi, unsigned long long p_step, float* out, const float* in) {{\n"
        );
        s += &format!("    const {bt} lo = ({bt})p_lo;\n    const {bt} hi = ({bt})p_hi;\n");
        if let StepSpec::Param(st) = self.step {
            s += &format!("    const {st} st = ({st})p_step;\n");
        }
        s += "    float acc = 0.0f;\n";
        let mut ind = "    ".to_string();
        if self.wrap_outer {
            s += "    for (int rep = 0; rep < 2; ++rep) {\n";
            ind += "    ";
        }
        if self.decl_outside {
            s += &format!("{ind}{t} i;\n");
        }
        let (start, bound) = if self.up { ("lo", "hi") } else { ("hi", "lo") };
        let off = if self.thread_offset {
            format!(" {} ({t})threadIdx.x", if self.up { '+' } else { '-' })
        } else {
            String::new()
        };
        let init = if self.decl_outside {
            format!("i = {start}{off}")
        } else {
            format!("{t} i = {start}{off}")
        };
        let cmp = match (self.up, self.inclusive, self.var_left) {
            (true, false, true) => format!("i < {bound}"),
            (true, true, true) => format!("i <= {bound}"),
            (false, false, true) => format!("i > {bound}"),
            (false, true, true) => format!("i >= {bound}"),
            (true, false, false) => format!("{bound} > i"),
            (true, true, false) => format!("{bound} >= i"),
            (false, false, false) => format!("{bound} < i"),
            (false, true, false) => format!("{bound} <= i"),
        };
        s += &format!("{ind}for ({init}; {cmp}; {}) {{\n", self.update());
        let b = format!("{ind}    ");
        s += &format!("{b}hu_trace(i);\n");
        for st in &self.body {
            s += &match st {
                Stmt::Local => format!("{b}float t = in[hu_slot(i)] * 0.5f;\n{b}acc += t;\n"),
                Stmt::Continue => format!("{b}if (hu_skip(i)) continue;\n"),
                Stmt::FloatAcc => format!("{b}acc = acc * 0.75f + in[hu_slot(i)];\n"),
                Stmt::InnerLoop => format!(
                    "{b}for (int q = 0; q < 3; ++q) {{\n{b}    if (q == 1) continue;\n{b}    acc += (float)q * in[hu_slot(i + q)];\n{b}}}\n"
                ),
                Stmt::Store => format!("{b}out[hu_slot(i * 3 + 1)] -= 0.25f * acc;\n"),
                Stmt::Block => format!("{b}{{\n{b}    int i2 = (int)(i % 5);\n{b}    acc += (float)i2;\n{b}}}\n"),
                Stmt::SwitchContinue => format!(
                    "{b}switch ((int)(i % 3)) {{\n{b}case 0:\n{b}    if (hu_skip(i)) continue;\n{b}    break;\n{b}case 1:\n{b}    acc += 1.0f;\n{b}    break;\n{b}default:\n{b}    acc -= 0.5f;\n{b}}}\n"
                ),
                Stmt::Macro => format!("{b}HU_MACC(i);\n"),
            };
        }
        s += &format!("{b}out[hu_slot(i)] += acc;\n{ind}}}\n");
        if self.decl_outside {
            s += &format!("{ind}hu_trace_final(i);\n");
        }
        if self.wrap_outer {
            s += "    }\n";
        }
        s += "    out[63] = acc;\n}\n";
        s
    }

    pub fn loop_index(&self) -> usize {
        usize::from(self.wrap_outer)
    }
}

/// One original/variant pair, as C++ text.
pub struct Pair {
    pub name: String,
    pub orig: String,
    pub var: String,
    pub bits: u32,
    pub signed: bool,
    /// Template argument when the kernels are templates.
    pub inst: Option<String>,
}

/// Unroll the loop at `index` of the only function of `orig` (named `name`) and return the
/// variant with the function renamed to `var_name`. Checks the rewrite keeps the bytes outside
/// the loop and re-parses without new errors.
pub fn unroll_kernel(
    orig: &str,
    index: usize,
    factor: u32,
    mode: Mode,
    var_name: &str,
    name: &str,
) -> Result<String, String> {
    let file = frontend::parse(orig.as_bytes());
    let loc = LoopLoc { function: 0, index };
    let v =
        transforms::unroll(orig.as_bytes(), &file, loc, factor, mode).map_err(|e| e.to_string())?;
    let lp = &file.functions[0].loops[index];
    let new = String::from_utf8(v.source).map_err(|e| e.to_string())?;
    if !new.starts_with(&orig[..lp.span.start]) || !new.ends_with(&orig[lp.span.end..]) {
        return Err("bytes outside the loop changed".into());
    }
    let re = frontend::parse(new.as_bytes());
    if re.parse_errors.len() > file.parse_errors.len() {
        return Err(format!(
            "re-parse: {} new errors",
            re.parse_errors.len() - file.parse_errors.len()
        ));
    }
    Ok(new.replacen(&format!("void {name}("), &format!("void {var_name}("), 1))
}

/// Compile all pairs into one host program with g++ and run the differential runner.
/// Returns the runner's output on success, or the reason for failure.
pub fn run_pairs(pairs: &[Pair], large: bool) -> Result<String, String> {
    run_pairs_in(pairs, large, &[])
}

/// [`run_pairs`] with more include directories for g++ (the headers the kernels include).
pub fn run_pairs_in(pairs: &[Pair], large: bool, dirs: &[PathBuf]) -> Result<String, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let mut src = String::from("#include \"hip_host.h\"\n");
    for p in pairs {
        src += &p.orig;
        src += &p.var;
    }
    src += "#include \"hu_diff_main.h\"\nstatic const hu_case hu_cases[] = {\n";
    for p in pairs {
        let targs = p
            .inst
            .as_ref()
            .map(|t| format!("<{t}>"))
            .unwrap_or_default();
        src += &format!(
            "    {{\"{}\", orig_{}{targs}, var_{}{targs}, {}, {}}},\n",
            p.name,
            p.name,
            p.name,
            p.bits,
            i32::from(p.signed)
        );
    }
    src += &format!(
        "}};\nint main() {{ return hu_run_all(hu_cases, {}, {}); }}\n",
        pairs.len(),
        i32::from(large)
    );
    let cpp = dir.path().join("diff.cpp");
    std::fs::write(&cpp, &src).map_err(|e| e.to_string())?;
    let bin = dir.path().join("diff");
    let t0 = std::time::Instant::now();
    let out = Command::new("g++")
        .args([
            "-std=c++17",
            "-O1",
            "-fwrapv",
            "-ffp-contract=off",
            "-w",
            "-I",
        ])
        .arg(testdata())
        .args(
            dirs.iter()
                .flat_map(|d| [std::ffi::OsStr::new("-I"), d.as_os_str()]),
        )
        .arg(&cpp)
        .arg("-o")
        .arg(&bin)
        .output()
        .map_err(|e| format!("g++ not runnable: {e}"))?;
    if !out.status.success() {
        let keep = std::env::temp_dir().join("hip-unroll-diff-failed.cpp");
        let _ = std::fs::write(&keep, &src);
        return Err(format!(
            "g++ failed (source kept at {}):\n{}",
            keep.display(),
            String::from_utf8_lossy(&out.stderr)
                .chars()
                .take(4000)
                .collect::<String>()
        ));
    }
    let t1 = std::time::Instant::now();
    let run = Command::new(&bin).output().map_err(|e| e.to_string())?;
    let mut stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    stdout += &format!(
        "g++ {:.1}s, run {:.1}s\n",
        (t1 - t0).as_secs_f64(),
        t1.elapsed().as_secs_f64()
    );
    if !run.status.success() {
        let keep = std::env::temp_dir().join("hip-unroll-diff-failed.cpp");
        let _ = std::fs::write(&keep, &src);
        return Err(format!(
            "outputs differ (source kept at {}):\n{stdout}",
            keep.display()
        ));
    }
    Ok(stdout)
}

/// Build the pair for `spec` in manual mode.
pub fn pair(spec: &LoopSpec, name: &str) -> Result<Pair, String> {
    let oname = format!("orig_{name}");
    let orig = spec.kernel(&oname);
    let var = unroll_kernel(
        &orig,
        spec.loop_index(),
        spec.factor,
        Mode::Manual,
        &format!("var_{name}"),
        &oname,
    )
    .map_err(|e| format!("{name}: {e}\n{orig}"))?;
    Ok(Pair {
        name: name.to_string(),
        orig,
        var,
        bits: spec.bits,
        signed: spec.signed,
        inst: spec.template.then(|| spec.ty.to_string()),
    })
}
