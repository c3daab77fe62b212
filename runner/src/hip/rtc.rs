//! The comparison kernel for AMD GPUs ([`crate::device::Device::differ`]), compiled at run time
//! by hiprtc for the device's own architecture: hiprtc is part of the HIP runtime (in
//! `libamdhip64` up to ROCm 5, `libhiprtc` from ROCm 6), so no compiler need be installed where
//! the GPU is. Compiling needs no GPU (tested here); loading and running it does.

use libloading::Library;
use std::ffi::{c_char, c_int, c_void, CStr, CString};

/// The kernel's HIP source.
pub const DIFFER_HIP: &str = include_str!("differ.hip");

/// The libraries hiprtc is looked for in, in order.
pub const LIBRARIES: &[&str] = &[
    "libhiprtc.so",
    "libhiprtc.so.6",
    "libhiprtc.so.7",
    "libamdhip64.so",
    "libamdhip64.so.5",
];

type Prog = *mut c_void;

/// Compile [`DIFFER_HIP`] for `arch` (`gfx942`): the code object, or why not (one line).
pub fn compile_differ(arch: &str) -> Result<Vec<u8>, String> {
    let mut last = String::from("not found");
    for name in LIBRARIES {
        // SAFETY: loading the HIP runtime or hiprtc runs their initialisers, as linking would.
        let lib = match unsafe { Library::new(*name) } {
            Ok(l) => l,
            Err(e) => {
                last = e.to_string();
                continue;
            }
        };
        // Never unloaded: the HIP runtime does not survive `dlclose` (its threads and exit
        // handlers stay behind).
        let lib: &'static Library = Box::leak(Box::new(lib));
        match compile_with(lib, arch) {
            Ok(code) => return Ok(code),
            Err(Missing(m)) => last = format!("{name}: {m}"),
            Err(Failed(m)) => return Err(m),
        }
    }
    Err(format!("no hiprtc ({last})"))
}

enum Failure {
    /// The library has no hiprtc: try the next.
    Missing(String),
    /// hiprtc failed: the reason.
    Failed(String),
}
use Failure::{Failed, Missing};

fn compile_with(lib: &Library, arch: &str) -> Result<Vec<u8>, Failure> {
    type Create = unsafe extern "C" fn(
        *mut Prog,
        *const c_char,
        *const c_char,
        c_int,
        *const *const c_char,
        *const *const c_char,
    ) -> c_int;
    type Compile = unsafe extern "C" fn(Prog, c_int, *const *const c_char) -> c_int;
    type Size = unsafe extern "C" fn(Prog, *mut usize) -> c_int;
    type Get = unsafe extern "C" fn(Prog, *mut c_char) -> c_int;
    type Destroy = unsafe extern "C" fn(*mut Prog) -> c_int;
    // SAFETY: each symbol is given the C signature hiprtc's header declares for it.
    let (create, compile, code_size, code, log_size, log, destroy) = unsafe {
        let sym = |n: &str| Missing(format!("no {n}"));
        (
            *lib.get::<Create>(b"hiprtcCreateProgram\0")
                .map_err(|_| sym("hiprtcCreateProgram"))?,
            *lib.get::<Compile>(b"hiprtcCompileProgram\0")
                .map_err(|_| sym("hiprtcCompileProgram"))?,
            *lib.get::<Size>(b"hiprtcGetCodeSize\0")
                .map_err(|_| sym("hiprtcGetCodeSize"))?,
            *lib.get::<Get>(b"hiprtcGetCode\0")
                .map_err(|_| sym("hiprtcGetCode"))?,
            *lib.get::<Size>(b"hiprtcGetProgramLogSize\0")
                .map_err(|_| sym("hiprtcGetProgramLogSize"))?,
            *lib.get::<Get>(b"hiprtcGetProgramLog\0")
                .map_err(|_| sym("hiprtcGetProgramLog"))?,
            *lib.get::<Destroy>(b"hiprtcDestroyProgram\0")
                .map_err(|_| sym("hiprtcDestroyProgram"))?,
        )
    };
    let src = CString::new(DIFFER_HIP).map_err(|_| Failed("a NUL in the source".into()))?;
    let option = CString::new(format!("--gpu-architecture={arch}"))
        .map_err(|_| Failed(format!("a NUL in the architecture `{arch}`")))?;
    let mut prog: Prog = std::ptr::null_mut();
    // SAFETY: valid NUL-terminated strings, no headers; `prog` is destroyed below.
    let r = unsafe {
        create(
            &mut prog,
            src.as_ptr(),
            c"hip_unroll_differ.hip".as_ptr(),
            0,
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    if r != 0 {
        return Err(Failed(format!("hiprtcCreateProgram failed ({r})")));
    }
    let options = [option.as_ptr()];
    // SAFETY: a created program and one option; the buffers are as long as the sizes say.
    let out = unsafe {
        let r = compile(prog, 1, options.as_ptr());
        let out = if r != 0 {
            let mut n = 0usize;
            let mut text = String::new();
            if log_size(prog, &mut n) == 0 && n > 0 {
                let mut buf = vec![0 as c_char; n + 1];
                if log(prog, buf.as_mut_ptr()) == 0 {
                    text = CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned();
                }
            }
            Err(Failed(format!(
                "hiprtc could not compile the comparison kernel for {arch} ({r}): {}",
                text.lines().next().unwrap_or("")
            )))
        } else {
            let mut n = 0usize;
            if code_size(prog, &mut n) != 0 || n == 0 {
                Err(Failed("hiprtc gave no code".into()))
            } else {
                let mut buf = vec![0u8; n];
                if code(prog, buf.as_mut_ptr().cast()) != 0 {
                    Err(Failed("hiprtcGetCode failed".into()))
                } else {
                    Ok(buf)
                }
            }
        };
        destroy(&mut prog);
        out
    };
    out
}
