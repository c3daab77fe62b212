//! Replaying a snapshot on a GPU through the HSA runtime: hold the captured ranges, start the
//! runtime, find the GPU agent, reserve every range at its exact address (vmem), map and grant
//! access, restore the memory, load code objects, look up the named kernel symbol, put the
//! kernargs in the kernarg pool, and dispatch AQL packets with the captured geometry and
//! segment sizes, each wait bounded by a timeout and each dispatch timed with its GPU
//! timestamps.
//!
//! This is the only module that touches a device. Nothing here has run on a GPU in this
//! repository's CI (it has none); its tests drive it up to the runtime's "no GPU" answer.

use crate::aql::{self, Geometry};
use crate::ffi::*;
use crate::plan::{self, PlanError, Reservation};
use crate::premap::{self, Hold};
use crate::runtime::{Hsa, RuntimeError, Vmem};
use crate::snapshot::{Contents, Snapshot};
use crate::variant::{self, Prepared};
use std::ffi::{c_void, CString};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU16, Ordering};
use std::time::{Duration, Instant};

/// Page size used to hold ranges before the runtime (and its pools' granule) is known.
pub const PAGE: u64 = 4096;

#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// The runtime started (or failed to) and offers no usable GPU.
    #[error("no GPU agent found: {0}")]
    NoGpu(String),
    #[error("{call} failed: {status}")]
    Hsa { call: &'static str, status: String },
    #[error("cannot plan the address reservations: {0}")]
    Plan(#[from] PlanError),
    #[error("{0}")]
    Reserve(String),
    /// A wait past the time limit (the binary names its flag).
    #[error("{what} did not complete within {secs:.1} s (the time limit)")]
    Timeout { what: String, secs: f64 },
    /// Regions the capture could not record, and replaying them zero-filled was not asked
    /// for ([`Options::allow_missing_regions`]; the binary names its flag).
    #[error("{}: {} region(s) were not captured ({}); they can only be replayed zero-filled, when asked", .dir.display(), .regions.len(), .regions.join(", "))]
    MissingRegions {
        dir: std::path::PathBuf,
        regions: Vec<String>,
    },
    #[error("{0}")]
    Snapshot(String),
}

/// How a replay runs.
#[derive(Debug, Clone)]
pub struct Options {
    /// Bound on every wait for the GPU.
    pub timeout: Duration,
    /// The runtime library (default: `$HIP_UNROLL_HSA_RUNTIME` or `libhsa-runtime64.so.1`).
    pub runtime_library: Option<PathBuf>,
    /// Replay even when some regions were not captured (they start zeroed).
    pub allow_missing_regions: bool,
    /// Which GPU agent (of the snapshot's processor, in the runtime's order) to replay on: a
    /// tune lane's device. Default 0.
    pub device: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            timeout: Duration::from_secs(10),
            runtime_library: None,
            allow_missing_regions: false,
            device: 0,
        }
    }
}

/// Where one planned reservation ended up.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum Placement {
    Exact,
    Relocated { got: u64 },
    Failed { error: String },
}

/// One reservation and its outcome (`reserve-check`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct ReservationReport {
    pub va: u64,
    pub size: u64,
    pub regions: usize,
    /// Why the range could not be held before `hsa_init` (something already maps it).
    pub premap_clash: Option<String>,
    #[serde(flatten)]
    pub placement: Placement,
}

/// The GPU and the runtime objects every replay needs.
struct Gpu {
    hsa: Hsa,
    vmem: Vmem,
    agent: Agent,
    agent_name: String,
    timestamp_hz: u64,
    pool: MemoryPool,
    granule: u64,
    kernarg_pool: Option<MemoryPool>,
}

fn check(hsa: &Hsa, call: &'static str, s: Status) -> Result<(), DeviceError> {
    if s == STATUS_SUCCESS {
        Ok(())
    } else {
        Err(DeviceError::Hsa {
            call,
            status: hsa.describe(s),
        })
    }
}

/// Why `hsa_init` may have failed, in words a user can act on.
fn init_hint() -> &'static str {
    if !std::path::Path::new("/dev/kfd").exists() {
        " (/dev/kfd is missing: no AMD GPU driver on this machine)"
    } else {
        ""
    }
}

/// Start the runtime and find GPU agent number `device` of those for `processor` (of any GPU
/// when empty).
fn start(hsa: Hsa, processor: &str, device: usize) -> Result<Gpu, DeviceError> {
    // SAFETY: hsa_init has no preconditions.
    let s = unsafe { (hsa.init)() };
    if s != STATUS_SUCCESS {
        return Err(DeviceError::NoGpu(format!(
            "hsa_init failed: {}{}",
            hsa.describe(s),
            init_hint()
        )));
    }
    let gpu = find_gpu(&hsa, processor, device);
    let (agent, agent_name) = match gpu {
        Ok(x) => x,
        Err(e) => {
            // SAFETY: balanced with the hsa_init above.
            unsafe { (hsa.shut_down)() };
            return Err(e);
        }
    };
    let vmem = match hsa.vmem() {
        Ok(v) => v,
        Err(e) => {
            // SAFETY: balanced with the hsa_init above.
            unsafe { (hsa.shut_down)() };
            return Err(e.into());
        }
    };
    match facts(&hsa, agent) {
        Ok((timestamp_hz, pool, granule, kernarg_pool)) => Ok(Gpu {
            hsa,
            vmem,
            agent,
            agent_name,
            timestamp_hz,
            pool,
            granule,
            kernarg_pool,
        }),
        Err(e) => {
            // SAFETY: balanced with the hsa_init above.
            unsafe { (hsa.shut_down)() };
            Err(e)
        }
    }
}

/// The timestamp frequency, the device pool and its granule, and the kernarg pool.
fn facts(
    hsa: &Hsa,
    agent: Agent,
) -> Result<(u64, MemoryPool, u64, Option<MemoryPool>), DeviceError> {
    let mut timestamp_hz = 0u64;
    // SAFETY: TIMESTAMP_FREQUENCY is a uint64_t.
    unsafe {
        (hsa.system_get_info)(
            SYSTEM_INFO_TIMESTAMP_FREQUENCY,
            &mut timestamp_hz as *mut u64 as *mut c_void,
        )
    };
    let (pool, granule) = device_pool(hsa, agent)?;
    let kernarg_pool = kernarg_pool(hsa)?;
    Ok((timestamp_hz, pool, granule, kernarg_pool))
}

struct AgentSearch<'a> {
    hsa: &'a Hsa,
    gpus: Vec<(Agent, String)>,
}

unsafe extern "C" fn collect_gpu(agent: Agent, data: *mut c_void) -> Status {
    // SAFETY: `data` is the AgentSearch passed to hsa_iterate_agents below.
    let search = unsafe { &mut *(data as *mut AgentSearch<'_>) };
    let mut device = u32::MAX;
    // SAFETY: AGENT_INFO_DEVICE is an hsa_device_type_t (u32).
    unsafe {
        (search.hsa.agent_get_info)(
            agent,
            AGENT_INFO_DEVICE,
            &mut device as *mut u32 as *mut c_void,
        )
    };
    if device == DEVICE_TYPE_GPU {
        let mut name = [0u8; 64];
        // SAFETY: AGENT_INFO_NAME fills at most 64 bytes.
        unsafe { (search.hsa.agent_get_info)(agent, AGENT_INFO_NAME, name.as_mut_ptr().cast()) };
        let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
        search
            .gpus
            .push((agent, String::from_utf8_lossy(&name[..end]).into_owned()));
    }
    STATUS_SUCCESS
}

fn find_gpu(hsa: &Hsa, processor: &str, device: usize) -> Result<(Agent, String), DeviceError> {
    let mut search = AgentSearch {
        hsa,
        gpus: Vec::new(),
    };
    // SAFETY: the callback only touches `search`, which outlives the call.
    let s = unsafe {
        (hsa.iterate_agents)(
            collect_gpu,
            &mut search as *mut AgentSearch<'_> as *mut c_void,
        )
    };
    check(hsa, "hsa_iterate_agents", s)?;
    if search.gpus.is_empty() {
        return Err(DeviceError::NoGpu(
            "the HSA runtime started but reports only CPU agents".into(),
        ));
    }
    let fitting: Vec<&(Agent, String)> = search
        .gpus
        .iter()
        .filter(|(_, n)| processor.is_empty() || n == processor)
        .collect();
    if let Some(g) = fitting.get(device) {
        return Ok((*g).clone());
    }
    if !fitting.is_empty() {
        return Err(DeviceError::NoGpu(format!(
            "device {device} was asked for, and the HSA runtime reports {} GPU agent(s) for {}",
            fitting.len(),
            if processor.is_empty() {
                "any processor"
            } else {
                processor
            }
        )));
    }
    let names: Vec<&str> = search.gpus.iter().map(|(_, n)| n.as_str()).collect();
    Err(DeviceError::NoGpu(format!(
        "the snapshot was captured on {processor}, this machine has {}",
        names.join(", ")
    )))
}

struct PoolSearch<'a> {
    hsa: &'a Hsa,
    want_flags: u32,
    found: Vec<(MemoryPool, u32)>,
}

unsafe extern "C" fn collect_pool(pool: MemoryPool, data: *mut c_void) -> Status {
    // SAFETY: `data` is the PoolSearch passed to the iteration.
    let search = unsafe { &mut *(data as *mut PoolSearch<'_>) };
    let (mut segment, mut flags, mut allowed) = (u32::MAX, 0u32, false);
    // SAFETY: SEGMENT and GLOBAL_FLAGS are u32 enums; RUNTIME_ALLOC_ALLOWED is a bool.
    unsafe {
        let get = search.hsa.memory_pool_get_info;
        get(
            pool,
            AMD_MEMORY_POOL_INFO_SEGMENT,
            &mut segment as *mut u32 as *mut c_void,
        );
        get(
            pool,
            AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS,
            &mut flags as *mut u32 as *mut c_void,
        );
        get(
            pool,
            AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED,
            &mut allowed as *mut bool as *mut c_void,
        );
    }
    if segment == AMD_SEGMENT_GLOBAL && allowed && flags & search.want_flags != 0 {
        search.found.push((pool, flags));
    }
    STATUS_SUCCESS
}

fn pools(hsa: &Hsa, agent: Agent, want_flags: u32) -> Result<Vec<(MemoryPool, u32)>, DeviceError> {
    let mut search = PoolSearch {
        hsa,
        want_flags,
        found: Vec::new(),
    };
    // SAFETY: the callback only touches `search`.
    let s = unsafe {
        (hsa.agent_iterate_memory_pools)(
            agent,
            collect_pool,
            &mut search as *mut PoolSearch<'_> as *mut c_void,
        )
    };
    check(hsa, "hsa_amd_agent_iterate_memory_pools", s)?;
    Ok(search.found)
}

/// The GPU's device-memory pool (coarse-grained preferred) and its allocation granule.
fn device_pool(hsa: &Hsa, agent: Agent) -> Result<(MemoryPool, u64), DeviceError> {
    let found = pools(
        hsa,
        agent,
        AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED | AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED,
    )?;
    let pool = found
        .iter()
        .find(|(_, f)| f & AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED != 0)
        .or(found.first())
        .map(|(p, _)| *p)
        .ok_or_else(|| {
            DeviceError::NoGpu("the GPU agent has no allocatable global memory pool".into())
        })?;
    let mut granule: usize = 0;
    // SAFETY: RUNTIME_ALLOC_GRANULE is a size_t.
    let s = unsafe {
        (hsa.memory_pool_get_info)(
            pool,
            AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE,
            &mut granule as *mut usize as *mut c_void,
        )
    };
    check(
        hsa,
        "hsa_amd_memory_pool_get_info(RUNTIME_ALLOC_GRANULE)",
        s,
    )?;
    Ok((pool, (granule as u64).max(PAGE)))
}

unsafe extern "C" fn collect_cpu(agent: Agent, data: *mut c_void) -> Status {
    // SAFETY: `data` is the (Hsa, Vec) pair passed below.
    let (hsa, cpus) = unsafe { &mut *(data as *mut (&Hsa, Vec<Agent>)) };
    let mut device = u32::MAX;
    // SAFETY: AGENT_INFO_DEVICE is a u32.
    unsafe {
        (hsa.agent_get_info)(
            agent,
            AGENT_INFO_DEVICE,
            &mut device as *mut u32 as *mut c_void,
        )
    };
    if device == DEVICE_TYPE_CPU {
        cpus.push(agent);
    }
    STATUS_SUCCESS
}

/// The system pool kernargs go in (`KERNARG_INIT`), found on a CPU agent.
fn kernarg_pool(hsa: &Hsa) -> Result<Option<MemoryPool>, DeviceError> {
    let mut data: (&Hsa, Vec<Agent>) = (hsa, Vec::new());
    // SAFETY: the callback only touches `data`.
    let s = unsafe { (hsa.iterate_agents)(collect_cpu, &mut data as *mut _ as *mut c_void) };
    check(hsa, "hsa_iterate_agents", s)?;
    for cpu in data.1 {
        if let Some((p, _)) = pools(hsa, cpu, AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT)?.first() {
            return Ok(Some(*p));
        }
    }
    Ok(None)
}

/// Start the runtime and list its GPU agents (`capture` asks this before running anything).
pub fn probe(runtime_library: Option<&std::path::Path>) -> Result<Vec<String>, DeviceError> {
    let hsa = Hsa::open(runtime_library)?;
    // SAFETY: hsa_init has no preconditions.
    let s = unsafe { (hsa.init)() };
    if s != STATUS_SUCCESS {
        return Err(DeviceError::NoGpu(format!(
            "hsa_init failed: {}{}",
            hsa.describe(s),
            init_hint()
        )));
    }
    let mut search = AgentSearch {
        hsa: &hsa,
        gpus: Vec::new(),
    };
    // SAFETY: the callback only touches `search`.
    let st = unsafe {
        (hsa.iterate_agents)(
            collect_gpu,
            &mut search as *mut AgentSearch<'_> as *mut c_void,
        )
    };
    let names: Vec<String> = search.gpus.into_iter().map(|(_, n)| n).collect();
    // SAFETY: balanced with hsa_init.
    unsafe { (hsa.shut_down)() };
    check(&hsa, "hsa_iterate_agents", st)?;
    if names.is_empty() {
        return Err(DeviceError::NoGpu(
            "the HSA runtime started but reports only CPU agents".into(),
        ));
    }
    Ok(names)
}

/// The page-granular plan used to hold ranges before the runtime starts.
fn region_spans(s: &Snapshot) -> Vec<(u64, u64)> {
    s.regions.iter().map(|r| (r.base(), r.size())).collect()
}

/// Hold every captured range (page-granular) before anything else maps into it.
fn hold_ranges(s: &Snapshot) -> Result<Vec<Hold>, DeviceError> {
    let p = plan::plan(&region_spans(s), PAGE)?;
    Ok(premap::hold_all(&p))
}

fn release_overlapping(holds: &mut [Hold], va: u64, size: u64) {
    for h in holds.iter_mut() {
        if h.va < va + size && va < h.va + h.size {
            h.release();
        }
    }
}

fn clash_for(holds: &[Hold], r: &Reservation) -> Option<String> {
    holds
        .iter()
        .filter(|h| h.va < r.va + r.size && r.va < h.va + h.size)
        .find_map(|h| h.clash.clone())
}

/// `reserve-check`: can every range be reserved at its exact address here? Reservations are
/// freed again; nothing is mapped.
pub fn reserve_check(
    s: &Snapshot,
    opts: &Options,
) -> Result<(String, u64, Vec<ReservationReport>), DeviceError> {
    let mut holds = hold_ranges(s)?;
    let hsa = Hsa::open(opts.runtime_library.as_deref())?;
    let gpu = start(hsa, s.processor(), opts.device)?;
    let result = (|| {
        let p = plan::plan(&region_spans(s), gpu.granule)?;
        let mut out = Vec::new();
        for r in &p {
            let clash = clash_for(&holds, r);
            release_overlapping(&mut holds, r.va, r.size);
            let placement = match reserve_at(&gpu, r) {
                Ok(()) => {
                    // SAFETY: reserved just now by reserve_at.
                    unsafe { (gpu.vmem.address_free)(r.va as *mut c_void, r.size as usize) };
                    Placement::Exact
                }
                Err(p) => p,
            };
            out.push(ReservationReport {
                va: r.va,
                size: r.size,
                regions: r.members.len(),
                premap_clash: clash,
                placement,
            });
        }
        Ok((gpu.agent_name.clone(), gpu.granule, out))
    })();
    // SAFETY: balanced with start's hsa_init.
    unsafe { (gpu.hsa.shut_down)() };
    result
}

/// Reserve `r` at exactly `r.va`; a different address is freed again and reported.
fn reserve_at(gpu: &Gpu, r: &Reservation) -> Result<(), Placement> {
    let mut got: *mut c_void = std::ptr::null_mut();
    // SAFETY: vmem reserve writes the address it chose.
    let s = unsafe { (gpu.vmem.address_reserve)(&mut got, r.size as usize, r.va, 0) };
    if s != STATUS_SUCCESS {
        return Err(Placement::Failed {
            error: gpu.hsa.describe(s),
        });
    }
    if got as u64 != r.va {
        // SAFETY: free what the runtime gave us.
        unsafe { (gpu.vmem.address_free)(got, r.size as usize) };
        return Err(Placement::Relocated { got: got as u64 });
    }
    Ok(())
}

/// A mapped reservation.
struct Mapped {
    va: u64,
    size: u64,
    handle: VmemHandle,
}

/// A kernel loaded and ready to dispatch.
struct Loaded {
    executable: Executable,
    kernel_object: u64,
    group_segment_size: u32,
    private_segment_size: u32,
}

/// Identifies a code object loaded into a [`Replayer`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelId(usize);

/// A replay session: memory reserved and restored, the snapshot's kernel loaded as
/// [`Replayer::baseline`]; variants load beside it.
pub struct Replayer {
    gpu: Gpu,
    snapshot: Snapshot,
    geometry: Geometry,
    opts: Options,
    mapped: Vec<Mapped>,
    /// Per region: its address and the bytes to restore.
    contents: Vec<(u64, Vec<u8>)>,
    kernels: Vec<Loaded>,
    kernarg: *mut c_void,
    queue: *mut Queue,
    signal: Signal,
}

impl Replayer {
    /// Reserve, map and restore the snapshot's memory and load its kernel.
    pub fn open(snapshot: Snapshot, opts: Options) -> Result<Replayer, DeviceError> {
        let missing = snapshot.missing();
        if !missing.is_empty() && !opts.allow_missing_regions {
            return Err(DeviceError::MissingRegions {
                dir: snapshot.dir.clone(),
                regions: missing.iter().map(|r| r.label()).collect(),
            });
        }
        let baseline =
            variant::baseline(&snapshot).map_err(|e| DeviceError::Snapshot(e.to_string()))?;
        let mut holds = hold_ranges(&snapshot)?;
        let hsa = Hsa::open(opts.runtime_library.as_deref())?;
        let gpu = start(hsa, snapshot.processor(), opts.device)?;
        let geometry = snapshot.geometry;
        let mut r = Replayer {
            gpu,
            snapshot,
            geometry,
            opts,
            mapped: Vec::new(),
            contents: Vec::new(),
            kernels: Vec::new(),
            kernarg: std::ptr::null_mut(),
            queue: std::ptr::null_mut(),
            signal: Signal::default(),
        };
        r.map_memory(&mut holds)?;
        drop(holds);
        r.read_contents()?;
        r.restore()?;
        r.setup_queue()?;
        r.load(&baseline)?;
        Ok(r)
    }

    /// The snapshot's own kernel.
    pub fn baseline(&self) -> KernelId {
        KernelId(0)
    }

    pub fn agent_name(&self) -> &str {
        &self.gpu.agent_name
    }

    pub fn snapshot(&self) -> &Snapshot {
        &self.snapshot
    }

    fn map_memory(&mut self, holds: &mut [Hold]) -> Result<(), DeviceError> {
        let p = plan::plan(&region_spans(&self.snapshot), self.gpu.granule)?;
        for r in &p {
            let clash = clash_for(holds, r);
            release_overlapping(holds, r.va, r.size);
            if let Err(placement) = reserve_at(&self.gpu, r) {
                let what = match placement {
                    Placement::Relocated { got } => format!("relocated to {got:#x}"),
                    Placement::Failed { error } => error,
                    Placement::Exact => unreachable!(),
                };
                return Err(DeviceError::Reserve(format!(
                    "cannot reserve {} at its captured address: {what}{}",
                    crate::snapshot::label(r.va, r.size),
                    clash
                        .map(|c| format!(" (before hsa_init the range was {c})"))
                        .unwrap_or_default()
                )));
            }
            let mut handle = VmemHandle::default();
            let g = &self.gpu;
            // SAFETY: creating a handle in the device pool; mapping it over our reservation.
            let s = unsafe {
                (g.vmem.handle_create)(
                    g.pool,
                    r.size as usize,
                    AMD_MEMORY_TYPE_NONE,
                    0,
                    &mut handle,
                )
            };
            if s != STATUS_SUCCESS {
                // SAFETY: free the reservation made above.
                unsafe { (g.vmem.address_free)(r.va as *mut c_void, r.size as usize) };
                check(&g.hsa, "hsa_amd_vmem_handle_create", s)?;
            }
            // SAFETY: as above.
            let s = unsafe { (g.vmem.map)(r.va as *mut c_void, r.size as usize, 0, handle, 0) };
            self.mapped.push(Mapped {
                va: r.va,
                size: r.size,
                handle,
            });
            check(&g.hsa, "hsa_amd_vmem_map", s)?;
            let desc = MemoryAccessDesc {
                permissions: ACCESS_PERMISSION_RW,
                agent_handle: g.agent,
            };
            // SAFETY: one descriptor.
            let s = unsafe { (g.vmem.set_access)(r.va as *mut c_void, r.size as usize, &desc, 1) };
            check(&g.hsa, "hsa_amd_vmem_set_access", s)?;
        }
        Ok(())
    }

    fn read_contents(&mut self) -> Result<(), DeviceError> {
        for region in &self.snapshot.regions {
            let bytes = match &region.contents {
                Contents::File { .. } => region
                    .read()
                    .map_err(|e| DeviceError::Snapshot(e.to_string()))?,
                Contents::Missing { .. } => vec![0u8; region.size() as usize],
            };
            self.contents.push((region.base(), bytes));
        }
        Ok(())
    }

    /// Copy every region back to its captured contents (outside any timed dispatch).
    pub fn restore(&mut self) -> Result<(), DeviceError> {
        for (base, bytes) in &self.contents {
            // SAFETY: `base..base+len` lies in a mapped reservation.
            let s = unsafe {
                (self.gpu.hsa.memory_copy)(*base as *mut c_void, bytes.as_ptr().cast(), bytes.len())
            };
            check(&self.gpu.hsa, "hsa_memory_copy (restore)", s)?;
        }
        Ok(())
    }

    /// Every region's current bytes, in snapshot order.
    pub fn read_back(&self) -> Result<Vec<Vec<u8>>, DeviceError> {
        let mut out = Vec::with_capacity(self.contents.len());
        for (base, bytes) in &self.contents {
            let mut buf = vec![0u8; bytes.len()];
            // SAFETY: as in restore.
            let s = unsafe {
                (self.gpu.hsa.memory_copy)(
                    buf.as_mut_ptr().cast(),
                    *base as *const c_void,
                    buf.len(),
                )
            };
            check(&self.gpu.hsa, "hsa_memory_copy (read back)", s)?;
            out.push(buf);
        }
        Ok(out)
    }

    /// The initial contents of every region, in snapshot order.
    pub fn initial(&self) -> impl Iterator<Item = (u64, &[u8])> {
        self.contents.iter().map(|(b, v)| (*b, v.as_slice()))
    }

    fn setup_queue(&mut self) -> Result<(), DeviceError> {
        let g = &self.gpu;
        let mut q: *mut Queue = std::ptr::null_mut();
        // SAFETY: a 64-packet multi-producer queue with the runtime's default segment limits.
        let s = unsafe {
            (g.hsa.queue_create)(
                g.agent,
                64,
                QUEUE_TYPE_MULTI,
                None,
                std::ptr::null_mut(),
                u32::MAX,
                u32::MAX,
                &mut q,
            )
        };
        check(&g.hsa, "hsa_queue_create", s)?;
        self.queue = q;
        // SAFETY: q was just created.
        let s = unsafe { (g.hsa.profiling_set_profiler_enabled)(q, 1) };
        check(&g.hsa, "hsa_amd_profiling_set_profiler_enabled", s)?;
        let mut sig = Signal::default();
        // SAFETY: a signal with no consumer restriction.
        let s = unsafe { (g.hsa.signal_create)(1, 0, std::ptr::null(), &mut sig) };
        check(&g.hsa, "hsa_signal_create", s)?;
        self.signal = sig;
        // Kernargs in the kernarg pool, readable by the GPU; hidden_queue_ptr names our queue.
        let pool = g.kernarg_pool.ok_or_else(|| {
            DeviceError::NoGpu("no kernarg memory pool (KERNARG_INIT) on any CPU agent".into())
        })?;
        let len = self.snapshot.kernarg.len().max(16);
        let mut ka: *mut c_void = std::ptr::null_mut();
        // SAFETY: allocation of `len` bytes.
        let s = unsafe { (g.hsa.memory_pool_allocate)(pool, len, 0, &mut ka) };
        check(&g.hsa, "hsa_amd_memory_pool_allocate (kernarg)", s)?;
        self.kernarg = ka;
        // SAFETY: grant the GPU access to the kernarg buffer.
        let s = unsafe { (g.hsa.agents_allow_access)(1, &g.agent, std::ptr::null(), ka) };
        check(&g.hsa, "hsa_amd_agents_allow_access (kernarg)", s)?;
        let mut bytes = self.snapshot.kernarg.clone();
        if let Some(off) = variant::queue_ptr_offset(&self.snapshot.kernel) {
            if off + 8 <= bytes.len() {
                bytes[off..off + 8].copy_from_slice(&(q as u64).to_le_bytes());
            }
        }
        // SAFETY: `ka` holds at least `bytes.len()` bytes of host-visible kernarg memory.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), ka.cast(), bytes.len()) };
        Ok(())
    }

    /// Load a code object (the baseline or a checked variant) and look up its kernel by name.
    pub fn load(&mut self, p: &Prepared) -> Result<KernelId, DeviceError> {
        let g = &self.gpu;
        let h = &g.hsa;
        let mut reader = CodeObjectReader::default();
        // SAFETY: the ELF bytes outlive the reader (destroyed below, after loading).
        let s = unsafe {
            (h.reader_create_from_memory)(p.elf.as_ptr().cast(), p.elf.len(), &mut reader)
        };
        check(h, "hsa_code_object_reader_create_from_memory", s)?;
        let mut exe = Executable::default();
        let empty = CString::default();
        // SAFETY: plain executable creation.
        let s = unsafe {
            (h.executable_create_alt)(
                PROFILE_FULL,
                DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT,
                empty.as_ptr(),
                &mut exe,
            )
        };
        if s != STATUS_SUCCESS {
            // SAFETY: created above.
            unsafe { (h.reader_destroy)(reader) };
            check(h, "hsa_executable_create_alt", s)?;
        }
        // SAFETY: load, freeze, then the reader is no longer needed.
        let s = unsafe {
            (h.executable_load_agent_code_object)(
                exe,
                g.agent,
                reader,
                empty.as_ptr(),
                std::ptr::null_mut(),
            )
        };
        unsafe { (h.reader_destroy)(reader) };
        let fail = |call, s| {
            // SAFETY: created above.
            unsafe { (h.executable_destroy)(exe) };
            check(h, call, s)
        };
        if s != STATUS_SUCCESS {
            fail("hsa_executable_load_agent_code_object", s)?;
        }
        // SAFETY: as above.
        let s = unsafe { (h.executable_freeze)(exe, empty.as_ptr()) };
        if s != STATUS_SUCCESS {
            fail("hsa_executable_freeze", s)?;
        }
        let name = CString::new(p.symbol.as_str()).map_err(|_| {
            DeviceError::Snapshot(format!("kernel symbol {:?} contains a NUL byte", p.symbol))
        })?;
        let mut sym = ExecutableSymbol::default();
        // SAFETY: look the named symbol up (never "the first kernel").
        let s =
            unsafe { (h.executable_get_symbol_by_name)(exe, name.as_ptr(), &g.agent, &mut sym) };
        if s != STATUS_SUCCESS {
            fail("hsa_executable_get_symbol_by_name", s)?;
        }
        let (mut kernel_object, mut kernarg_size) = (0u64, 0u32);
        // SAFETY: KERNEL_OBJECT is a u64, KERNARG_SEGMENT_SIZE a u32.
        unsafe {
            (h.executable_symbol_get_info)(
                sym,
                EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT,
                &mut kernel_object as *mut u64 as *mut c_void,
            );
            (h.executable_symbol_get_info)(
                sym,
                EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE,
                &mut kernarg_size as *mut u32 as *mut c_void,
            );
        }
        if kernarg_size as usize != self.snapshot.kernarg.len() {
            // SAFETY: created above.
            unsafe { (h.executable_destroy)(exe) };
            return Err(DeviceError::Snapshot(format!(
                "the runtime gives `{}` a {kernarg_size}-byte kernarg segment, the snapshot has {} bytes",
                p.symbol,
                self.snapshot.kernarg.len()
            )));
        }
        self.kernels.push(Loaded {
            executable: exe,
            kernel_object,
            group_segment_size: p.group_segment_size,
            private_segment_size: p.private_segment_size,
        });
        Ok(KernelId(self.kernels.len() - 1))
    }

    /// Dispatch a loaded kernel once on the current memory and return its GPU time in ns.
    pub fn run(&mut self, k: KernelId) -> Result<u64, DeviceError> {
        let g = &self.gpu;
        let h = &g.hsa;
        let kernel = &self.kernels[k.0];
        let timeout = self.opts.timeout;
        // SAFETY: the signal and queue are ours; the packet slot is reserved by the write
        // index increment and published by the release store of its header.
        unsafe {
            (h.signal_store_relaxed)(self.signal, 1);
            let q = &*self.queue;
            let index = (h.queue_add_write_index_relaxed)(self.queue, 1);
            let deadline = Instant::now() + timeout;
            while index - (h.queue_load_read_index_scacquire)(self.queue) >= q.size as u64 {
                if Instant::now() > deadline {
                    return Err(DeviceError::Timeout {
                        what: "a free queue slot".into(),
                        secs: timeout.as_secs_f64(),
                    });
                }
                std::thread::yield_now();
            }
            let packet = aql::dispatch_packet(
                &self.geometry,
                kernel.kernel_object,
                self.kernarg as u64,
                kernel.group_segment_size,
                kernel.private_segment_size,
                self.signal,
            );
            let (header, body) = aql::split_header(&packet);
            let slot = (q.base_address as *mut u8).add((index % q.size as u64) as usize * 64);
            std::ptr::copy_nonoverlapping(body.as_ptr(), slot.add(2), body.len());
            (*(slot as *const AtomicU16)).store(header, Ordering::Release);
            (h.signal_store_screlease)(q.doorbell_signal, index as i64);
        }
        self.wait_signal("the kernel dispatch")?;
        let mut t = DispatchTime::default();
        // SAFETY: the dispatch completed on our profiled queue.
        let s = unsafe { (h.profiling_get_dispatch_time)(g.agent, self.signal, &mut t) };
        check(h, "hsa_amd_profiling_get_dispatch_time", s)?;
        aql::ticks_to_ns(t.start, t.end, g.timestamp_hz).ok_or_else(|| DeviceError::Hsa {
            call: "hsa_amd_profiling_get_dispatch_time",
            status: format!(
                "end {} before start {} or no timestamp frequency",
                t.end, t.start
            ),
        })
    }

    fn wait_signal(&self, what: &str) -> Result<(), DeviceError> {
        let h = &self.gpu.hsa;
        let deadline = Instant::now() + self.opts.timeout;
        // Wake at least every 10 ms (in system ticks) to look at the clock.
        let hint = (self.gpu.timestamp_hz / 100).max(1);
        loop {
            // SAFETY: our signal.
            let v = unsafe {
                (h.signal_wait_scacquire)(
                    self.signal,
                    SIGNAL_CONDITION_LT,
                    1,
                    hint,
                    WAIT_STATE_BLOCKED,
                )
            };
            if v < 1 {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(DeviceError::Timeout {
                    what: what.to_string(),
                    secs: self.opts.timeout.as_secs_f64(),
                });
            }
        }
    }

    /// `warmup` untimed runs, then `iterations` timed ones; memory is restored before each run
    /// when `recopy` (else only before the first), outside the timed dispatch.
    pub fn time(
        &mut self,
        k: KernelId,
        iterations: usize,
        warmup: usize,
        recopy: bool,
    ) -> Result<Vec<u64>, DeviceError> {
        let mut out = Vec::with_capacity(iterations);
        self.restore()?;
        for i in 0..warmup + iterations {
            if recopy && i > 0 {
                self.restore()?;
            }
            let ns = self.run(k)?;
            if i >= warmup {
                out.push(ns);
            }
        }
        Ok(out)
    }

    /// Time two kernels interleaved in blocks of opposite orders (A B, B A, ... as
    /// `samplestats::round_order` gives them), each run on restored memory when `recopy`.
    pub fn time_pair(
        &mut self,
        a: KernelId,
        b: KernelId,
        iterations: usize,
        warmup: usize,
        recopy: bool,
    ) -> Result<(Vec<u64>, Vec<u64>), DeviceError> {
        let (mut ta, mut tb) = (
            Vec::with_capacity(iterations),
            Vec::with_capacity(iterations),
        );
        self.restore()?;
        for i in 0..warmup + iterations {
            for slot in samplestats::round_order("replay pair", i) {
                let (k, out) = if slot == 0 {
                    (a, &mut ta)
                } else {
                    (b, &mut tb)
                };
                if recopy {
                    self.restore()?;
                }
                let ns = self.run(k)?;
                if i >= warmup {
                    out.push(ns);
                }
            }
        }
        Ok((ta, tb))
    }

    /// Run `a` twice and `b` once, each on restored memory, and compare what they wrote.
    pub fn compare(
        &mut self,
        a: KernelId,
        b: KernelId,
        types: &[crate::diff::FloatRegion],
        tol: crate::diff::Tolerance,
    ) -> Result<crate::diff::Comparison, DeviceError> {
        let mut outs = Vec::new();
        for k in [a, a, b] {
            self.restore()?;
            self.run(k)?;
            outs.push(self.read_back()?);
        }
        let runs: Vec<crate::diff::RegionRuns<'_>> = self
            .contents
            .iter()
            .enumerate()
            .map(|(i, (base, init))| crate::diff::RegionRuns {
                base: *base,
                initial: init,
                baseline: &outs[0][i],
                baseline_again: Some(&outs[1][i]),
                variant: &outs[2][i],
            })
            .collect();
        Ok(crate::diff::compare(&runs, types, tol))
    }
}

impl Drop for Replayer {
    fn drop(&mut self) {
        let g = &self.gpu;
        // SAFETY: each object was created by this session and is released once, in reverse.
        unsafe {
            for k in &self.kernels {
                (g.hsa.executable_destroy)(k.executable);
            }
            if self.signal.handle != 0 {
                (g.hsa.signal_destroy)(self.signal);
            }
            if !self.queue.is_null() {
                (g.hsa.queue_destroy)(self.queue);
            }
            if !self.kernarg.is_null() {
                (g.hsa.memory_pool_free)(self.kernarg);
            }
            for m in self.mapped.iter().rev() {
                (g.vmem.unmap)(m.va as *mut c_void, m.size as usize);
                (g.vmem.handle_release)(m.handle);
                (g.vmem.address_free)(m.va as *mut c_void, m.size as usize);
            }
            (g.hsa.shut_down)();
        }
    }
}
