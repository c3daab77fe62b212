//! The NT_AMDGPU_METADATA note (msgpack): `amdhsa.version`, `amdhsa.target`, `amdhsa.kernels`
//! with every per-kernel key the code-object V3+ ABI defines that hip-unroll uses, and the
//! argument list. Key names follow LLVM's AMDGPUUsage ("Code Object V3 Metadata").

use crate::error::{Error, Result};
use rmpv::Value;
use serde::Serialize;

/// The decoded metadata note.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Metadata {
    /// `amdhsa.version` (major, minor).
    pub version: Vec<u64>,
    /// `amdhsa.target`, e.g. `amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-` (absent in some producers).
    pub target: Option<String>,
    pub kernels: Vec<KernelMeta>,
}

/// One entry of `amdhsa.kernels`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct KernelMeta {
    /// `.name`: the source-level (mangled) name.
    pub name: String,
    /// `.symbol`: the kernel descriptor symbol, `name.kd`.
    pub symbol: String,
    /// `.vgpr_count`: on gfx90a/gfx94x already the unified count (arch VGPRs rounded to 4 plus AGPRs).
    pub vgpr_count: u32,
    /// `.agpr_count`: only emitted for targets with MAI instructions (gfx908+ CDNA).
    pub agpr_count: Option<u32>,
    pub sgpr_count: u32,
    pub vgpr_spill_count: u32,
    pub sgpr_spill_count: u32,
    /// `.group_segment_fixed_size`: static LDS bytes (dynamic LDS is not included).
    pub group_segment_fixed_size: u32,
    /// `.private_segment_fixed_size`: scratch bytes per work-item.
    pub private_segment_fixed_size: u32,
    pub kernarg_segment_size: u32,
    pub kernarg_segment_align: u32,
    pub wavefront_size: u32,
    pub max_flat_workgroup_size: u32,
    pub uses_dynamic_stack: Option<bool>,
    /// `.workgroup_processor_mode` (gfx10+, newer producers).
    pub workgroup_processor_mode: Option<bool>,
    pub args: Vec<ArgMeta>,
}

/// One entry of a kernel's `.args`.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ArgMeta {
    pub name: Option<String>,
    pub type_name: Option<String>,
    pub offset: u32,
    pub size: u32,
    /// `global_buffer`, `by_value`, `dynamic_shared_pointer`, `hidden_*`...
    pub value_kind: String,
    pub address_space: Option<String>,
    pub access: Option<String>,
    pub actual_access: Option<String>,
    pub is_const: Option<bool>,
    pub is_restrict: Option<bool>,
    pub is_volatile: Option<bool>,
}

/// Decode the msgpack description of an NT_AMDGPU_METADATA note.
pub fn decode(desc: &[u8]) -> Result<Metadata> {
    let mut rd = desc;
    let root =
        rmpv::decode::read_value(&mut rd).map_err(|e| Error::Metadata(format!("msgpack: {e}")))?;
    let map = as_map(&root, "metadata root")?;
    let version = match get(map, "amdhsa.version") {
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| as_u64(v, "amdhsa.version"))
            .collect::<Result<Vec<_>>>()?,
        Some(_) => return Err(Error::Metadata("amdhsa.version is not an array".into())),
        None => Vec::new(),
    };
    let target = match get(map, "amdhsa.target") {
        Some(v) => Some(as_str(v, "amdhsa.target")?.to_string()),
        None => None,
    };
    let kernels = match get(map, "amdhsa.kernels") {
        Some(Value::Array(a)) => a.iter().map(kernel).collect::<Result<Vec<_>>>()?,
        Some(_) => return Err(Error::Metadata("amdhsa.kernels is not an array".into())),
        None => return Err(Error::Metadata("no amdhsa.kernels".into())),
    };
    Ok(Metadata {
        version,
        target,
        kernels,
    })
}

fn kernel(v: &Value) -> Result<KernelMeta> {
    let m = as_map(v, "kernel")?;
    let name = req_str(m, ".name")?;
    let u = |k: &str, default: u32| -> Result<u32> {
        match get(m, k) {
            Some(v) => as_u32(v, k),
            None => Ok(default),
        }
    };
    let args = match get(m, ".args") {
        Some(Value::Array(a)) => a.iter().map(arg).collect::<Result<Vec<_>>>()?,
        Some(_) => return Err(Error::Metadata(format!("{name}: .args is not an array"))),
        None => Vec::new(),
    };
    Ok(KernelMeta {
        symbol: req_str(m, ".symbol")?,
        vgpr_count: u(".vgpr_count", 0)?,
        agpr_count: opt_u32(m, ".agpr_count")?,
        sgpr_count: u(".sgpr_count", 0)?,
        vgpr_spill_count: u(".vgpr_spill_count", 0)?,
        sgpr_spill_count: u(".sgpr_spill_count", 0)?,
        group_segment_fixed_size: u(".group_segment_fixed_size", 0)?,
        private_segment_fixed_size: u(".private_segment_fixed_size", 0)?,
        kernarg_segment_size: u(".kernarg_segment_size", 0)?,
        kernarg_segment_align: u(".kernarg_segment_align", 0)?,
        wavefront_size: u(".wavefront_size", 64)?,
        max_flat_workgroup_size: u(".max_flat_workgroup_size", 1024)?,
        uses_dynamic_stack: opt_bool(m, ".uses_dynamic_stack")?,
        workgroup_processor_mode: opt_bool(m, ".workgroup_processor_mode")?,
        args,
        name,
    })
}

fn arg(v: &Value) -> Result<ArgMeta> {
    let m = as_map(v, "argument")?;
    Ok(ArgMeta {
        name: opt_str(m, ".name")?,
        type_name: opt_str(m, ".type_name")?,
        offset: opt_u32(m, ".offset")?
            .ok_or_else(|| Error::Metadata("argument without .offset".into()))?,
        size: opt_u32(m, ".size")?
            .ok_or_else(|| Error::Metadata("argument without .size".into()))?,
        value_kind: req_str(m, ".value_kind")?,
        address_space: opt_str(m, ".address_space")?,
        access: opt_str(m, ".access")?,
        actual_access: opt_str(m, ".actual_access")?,
        is_const: opt_bool(m, ".is_const")?,
        is_restrict: opt_bool(m, ".is_restrict")?,
        is_volatile: opt_bool(m, ".is_volatile")?,
    })
}

fn get<'a>(m: &'a [(Value, Value)], key: &str) -> Option<&'a Value> {
    m.iter()
        .find(|(k, _)| k.as_str() == Some(key))
        .map(|(_, v)| v)
}

fn as_map<'a>(v: &'a Value, what: &str) -> Result<&'a [(Value, Value)]> {
    match v {
        Value::Map(m) => Ok(m),
        _ => Err(Error::Metadata(format!("{what} is not a map"))),
    }
}

fn as_str<'a>(v: &'a Value, key: &str) -> Result<&'a str> {
    v.as_str()
        .ok_or_else(|| Error::Metadata(format!("{key} is not a UTF-8 string")))
}

fn as_u64(v: &Value, key: &str) -> Result<u64> {
    v.as_u64()
        .ok_or_else(|| Error::Metadata(format!("{key} is not an unsigned integer")))
}

fn as_u32(v: &Value, key: &str) -> Result<u32> {
    u32::try_from(as_u64(v, key)?)
        .map_err(|_| Error::Metadata(format!("{key} does not fit in 32 bits")))
}

fn req_str(m: &[(Value, Value)], key: &str) -> Result<String> {
    opt_str(m, key)?.ok_or_else(|| Error::Metadata(format!("missing {key}")))
}

fn opt_str(m: &[(Value, Value)], key: &str) -> Result<Option<String>> {
    get(m, key)
        .map(|v| as_str(v, key).map(str::to_string))
        .transpose()
}

fn opt_u32(m: &[(Value, Value)], key: &str) -> Result<Option<u32>> {
    get(m, key).map(|v| as_u32(v, key)).transpose()
}

/// Booleans are msgpack booleans in LLVM's output; accept 0/1 integers too.
fn opt_bool(m: &[(Value, Value)], key: &str) -> Result<Option<bool>> {
    get(m, key)
        .map(|v| match v {
            Value::Boolean(b) => Ok(*b),
            v => match v.as_u64() {
                Some(0) => Ok(false),
                Some(1) => Ok(true),
                _ => Err(Error::Metadata(format!("{key} is not a boolean"))),
            },
        })
        .transpose()
}

/// Demangle an Itanium C++ name; `None` for names that are not mangled (`extern "C"`).
pub fn demangle(name: &str) -> Option<String> {
    kernelname::demangle(name)
}

/// The bare function name of a (possibly mangled) kernel name: `_Z5scaleILi4EEvPfPKfif` ->
/// `scale`, `_ZN2ns3fooEPf` -> `foo`, `plain` -> `plain` (`kernelname::bare`, the one reading).
pub fn base_name(name: &str) -> String {
    kernelname::bare(name)
}
