//! AMD GPUs through the HIP runtime, loaded at run time (`libamdhip64.so`, `.so.6`, `.so.5`):
//! a small typed FFI over the module API (no link-time dependency, so the binary runs on
//! machines without ROCm). Every call is checked and its error named (`hipGetErrorName`).
//! Buffers are compared on the device by a kernel of hip-unroll's own compiled by hiprtc
//! ([`rtc`]), checked on known buffers before its first answer is used.

pub mod rtc;

use crate::device::{
    bounded, differ_on, wait_until, Api, Compares, Device, DeviceError, DeviceInfo, DevicePtr,
    Differ, KernelHandle, Launch, Limits,
};
use libloading::Library;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::sync::Arc;
use std::time::Duration;

type Err = c_int;
type Ptr = *mut c_void;

const SUCCESS: Err = 0;
const NOT_READY: Err = 600;
const MEMCPY_HTOD: c_int = 1;
const MEMCPY_DTOH: c_int = 2;
const MEMCPY_DTOD: c_int = 3;
// hipDeviceAttribute_t (stable since ROCm 5.0).
const ATTR_MAX_BLOCK_DIM_X: c_int = 26;
const ATTR_MAX_GRID_DIM_X: c_int = 29;
const ATTR_MAX_THREADS_PER_BLOCK: c_int = 56;
const ATTR_MAX_SHARED_PER_BLOCK: c_int = 74;
const ATTR_WARP_SIZE: c_int = 87;
// hipModuleLaunchKernel's `extra` markers.
const LAUNCH_PARAM_BUFFER_POINTER: usize = 1;
const LAUNCH_PARAM_BUFFER_SIZE: usize = 2;
const LAUNCH_PARAM_END: usize = 3;

/// The library names tried, in order.
pub const LIBRARIES: &[&str] = &[
    "libamdhip64.so",
    "libamdhip64.so.6",
    "libamdhip64.so.7",
    "libamdhip64.so.5",
];

#[allow(clippy::type_complexity)]
struct Api_ {
    _lib: Library,
    init: unsafe extern "C" fn(c_uint) -> Err,
    get_device_count: unsafe extern "C" fn(*mut c_int) -> Err,
    set_device: unsafe extern "C" fn(c_int) -> Err,
    device_get_attribute: unsafe extern "C" fn(*mut c_int, c_int, c_int) -> Err,
    device_get_name: unsafe extern "C" fn(*mut c_char, c_int, c_int) -> Err,
    get_error_name: unsafe extern "C" fn(Err) -> *const c_char,
    get_error_string: unsafe extern "C" fn(Err) -> *const c_char,
    module_load_data: unsafe extern "C" fn(*mut Ptr, *const c_void) -> Err,
    module_get_function: unsafe extern "C" fn(*mut Ptr, Ptr, *const c_char) -> Err,
    module_unload: unsafe extern "C" fn(Ptr) -> Err,
    module_launch_kernel: unsafe extern "C" fn(
        Ptr,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        Ptr,
        *mut Ptr,
        *mut Ptr,
    ) -> Err,
    event_create: unsafe extern "C" fn(*mut Ptr) -> Err,
    event_record: unsafe extern "C" fn(Ptr, Ptr) -> Err,
    event_query: unsafe extern "C" fn(Ptr) -> Err,
    event_elapsed_time: unsafe extern "C" fn(*mut f32, Ptr, Ptr) -> Err,
    event_destroy: unsafe extern "C" fn(Ptr) -> Err,
    malloc: unsafe extern "C" fn(*mut Ptr, usize) -> Err,
    free: unsafe extern "C" fn(Ptr) -> Err,
    memcpy: unsafe extern "C" fn(Ptr, *const c_void, usize, c_int) -> Err,
    mem_get_info: unsafe extern "C" fn(*mut usize, *mut usize) -> Err,
}

impl Api_ {
    fn open() -> Result<Api_, DeviceError> {
        let mut last = String::new();
        for name in LIBRARIES {
            // SAFETY: loading the HIP runtime runs its initialisers, as linking it would.
            match unsafe { Library::new(*name) } {
                Ok(lib) => {
                    return Api_::bind(lib)
                        .map_err(|e| DeviceError::Unavailable(format!("{name}: {e}")))
                }
                Err(e) => last = e.to_string(),
            }
        }
        Err(DeviceError::NoRuntime(
            Api::Hip,
            format!("no HIP runtime: cannot load libamdhip64 ({last}); install ROCm's HIP runtime"),
        ))
    }

    fn bind(lib: Library) -> Result<Api_, libloading::Error> {
        // SAFETY: each symbol is given the C signature HIP's headers declare for it.
        unsafe {
            macro_rules! sym {
                ($name:literal) => {
                    *lib.get(concat!($name, "\0").as_bytes())?
                };
            }
            Ok(Api_ {
                init: sym!("hipInit"),
                get_device_count: sym!("hipGetDeviceCount"),
                set_device: sym!("hipSetDevice"),
                device_get_attribute: sym!("hipDeviceGetAttribute"),
                device_get_name: sym!("hipDeviceGetName"),
                get_error_name: sym!("hipGetErrorName"),
                get_error_string: sym!("hipGetErrorString"),
                module_load_data: sym!("hipModuleLoadData"),
                module_get_function: sym!("hipModuleGetFunction"),
                module_unload: sym!("hipModuleUnload"),
                module_launch_kernel: sym!("hipModuleLaunchKernel"),
                event_create: sym!("hipEventCreate"),
                event_record: sym!("hipEventRecord"),
                event_query: sym!("hipEventQuery"),
                event_elapsed_time: sym!("hipEventElapsedTime"),
                event_destroy: sym!("hipEventDestroy"),
                malloc: sym!("hipMalloc"),
                free: sym!("hipFree"),
                memcpy: sym!("hipMemcpy"),
                mem_get_info: sym!("hipMemGetInfo"),
                _lib: lib,
            })
        }
    }

    fn check(&self, call: &'static str, e: Err) -> Result<(), DeviceError> {
        if e == SUCCESS {
            return Ok(());
        }
        Err(self.error(call, e))
    }

    fn error(&self, call: &'static str, e: Err) -> DeviceError {
        // SAFETY: both return pointers to static strings (or null).
        let text = |p: *const c_char| {
            (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
        };
        let name =
            text(unsafe { (self.get_error_name)(e) }).unwrap_or_else(|| format!("error {e}"));
        let detail = text(unsafe { (self.get_error_string)(e) })
            .filter(|d| *d != name)
            .map(|d| format!(" ({d})"))
            .unwrap_or_default();
        DeviceError::Call {
            call,
            name: format!("{name} ({e})"),
            detail,
        }
    }
}

struct Loaded {
    function: Ptr,
    offsets: Vec<u32>,
    kernarg_size: u32,
}

/// One HIP device, its modules, allocations and a pair of timing events.
pub struct HipDevice {
    api: Arc<Api_>,
    info: DeviceInfo,
    timeout: Duration,
    modules: Vec<Ptr>,
    kernels: Vec<Loaded>,
    allocations: Vec<Ptr>,
    events: (Ptr, Ptr),
    /// Set after a timeout: nothing may be called on the device again.
    poisoned: bool,
    /// `None`: not loaded yet; `Some(None)`: it could not be compiled or loaded, or failed its
    /// self-check (buffers are then read back by the caller).
    differ: Option<Option<Differ>>,
}

/// Initialise HIP and count its devices (bounded by `timeout`): `Ok(0)` when the runtime loads
/// but there is no GPU.
pub fn device_count(timeout: Duration) -> Result<i32, DeviceError> {
    let api = Arc::new(Api_::open()?);
    count(&api, timeout)
}

fn count(api: &Arc<Api_>, timeout: Duration) -> Result<i32, DeviceError> {
    let a = Arc::clone(api);
    let (init, n, e) = bounded("hipInit", timeout, move || {
        // SAFETY: plain C calls with valid out-pointers.
        let init = unsafe { (a.init)(0) };
        let mut n: c_int = 0;
        let e = unsafe { (a.get_device_count)(&mut n) };
        (init, n, e)
    })?;
    if e != SUCCESS || n <= 0 {
        let why = if e != SUCCESS {
            api.error("hipGetDeviceCount", e).to_string()
        } else {
            api.error("hipInit", init).to_string()
        };
        let _ = init;
        return Err(DeviceError::Unavailable(format!(
            "no AMD GPU: the HIP runtime found no device ({why})"
        )));
    }
    Ok(n)
}

impl HipDevice {
    /// Open device `ordinal`; `timeout` bounds initialisation and every wait.
    pub fn open(ordinal: i32, timeout: Duration) -> Result<HipDevice, DeviceError> {
        let api = Arc::new(Api_::open()?);
        let n = count(&api, timeout)?;
        if ordinal < 0 || ordinal >= n {
            return Err(DeviceError::Unavailable(format!(
                "no HIP device {ordinal} (there are {n})"
            )));
        }
        // SAFETY: plain C calls with valid out-pointers.
        unsafe {
            api.check("hipSetDevice", (api.set_device)(ordinal))?;
            let attr = |a: c_int| -> Result<u32, DeviceError> {
                let mut v: c_int = 0;
                api.check(
                    "hipDeviceGetAttribute",
                    (api.device_get_attribute)(&mut v, a, ordinal),
                )?;
                Ok(v.max(0) as u32)
            };
            let limits = Limits {
                max_threads_per_block: attr(ATTR_MAX_THREADS_PER_BLOCK)?,
                max_block: [
                    attr(ATTR_MAX_BLOCK_DIM_X)?,
                    attr(ATTR_MAX_BLOCK_DIM_X + 1)?,
                    attr(ATTR_MAX_BLOCK_DIM_X + 2)?,
                ],
                max_grid: [
                    attr(ATTR_MAX_GRID_DIM_X)?,
                    attr(ATTR_MAX_GRID_DIM_X + 1)?,
                    attr(ATTR_MAX_GRID_DIM_X + 2)?,
                ],
                max_shared_per_block: attr(ATTR_MAX_SHARED_PER_BLOCK)?,
                warp_size: attr(ATTR_WARP_SIZE)?,
            };
            let mut name = [0 as c_char; 256];
            api.check(
                "hipDeviceGetName",
                (api.device_get_name)(name.as_mut_ptr(), name.len() as c_int, ordinal),
            )?;
            let name = CStr::from_ptr(name.as_ptr()).to_string_lossy().into_owned();
            let mut start: Ptr = std::ptr::null_mut();
            let mut stop: Ptr = std::ptr::null_mut();
            api.check("hipEventCreate", (api.event_create)(&mut start))?;
            api.check("hipEventCreate", (api.event_create)(&mut stop))?;
            Ok(HipDevice {
                info: DeviceInfo {
                    api: Api::Hip,
                    ordinal,
                    name,
                    arch: crate::device::amd_arch(ordinal),
                    limits,
                },
                api,
                timeout,
                modules: Vec::new(),
                kernels: Vec::new(),
                allocations: Vec::new(),
                events: (start, stop),
                poisoned: false,
                differ: None,
            })
        }
    }

    fn live(&self) -> Result<(), DeviceError> {
        if self.poisoned {
            return Err(DeviceError::Invalid(
                "the device timed out earlier; it is not used again".into(),
            ));
        }
        Ok(())
    }
}

/// The comparison kernel compiled by hiprtc for the device's architecture ([`rtc`]).
impl Compares for HipDevice {
    fn differ_slot(&mut self) -> &mut Option<Option<Differ>> {
        &mut self.differ
    }
    fn differ_image(&mut self) -> Option<Vec<u8>> {
        rtc::compile_differ(self.info.arch.as_deref()?).ok()
    }
    fn poisoned(&self) -> bool {
        self.poisoned
    }
}

impl Device for HipDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn load(
        &mut self,
        image: &[u8],
        symbol: &str,
        param_offsets: &[u32],
        kernarg_size: u32,
    ) -> Result<KernelHandle, DeviceError> {
        self.live()?;
        let name = CString::new(symbol)
            .map_err(|_| DeviceError::Invalid(format!("kernel name `{symbol}` has a NUL byte")))?;
        let mut module: Ptr = std::ptr::null_mut();
        let mut function: Ptr = std::ptr::null_mut();
        // SAFETY: the image outlives the call (HIP copies it); out-pointers are valid.
        unsafe {
            self.api.check(
                "hipModuleLoadData",
                (self.api.module_load_data)(&mut module, image.as_ptr().cast()),
            )?;
            self.modules.push(module);
            self.api.check(
                "hipModuleGetFunction",
                (self.api.module_get_function)(&mut function, module, name.as_ptr()),
            )?;
        }
        self.kernels.push(Loaded {
            function,
            offsets: param_offsets.to_vec(),
            kernarg_size,
        });
        Ok(KernelHandle(self.kernels.len() - 1))
    }

    fn alloc(&mut self, bytes: usize) -> Result<DevicePtr, DeviceError> {
        self.live()?;
        let mut p: Ptr = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        unsafe {
            self.api
                .check("hipMalloc", (self.api.malloc)(&mut p, bytes.max(1)))?
        };
        self.allocations.push(p);
        Ok(DevicePtr(p as u64))
    }

    fn upload(&mut self, dst: DevicePtr, src: &[u8]) -> Result<(), DeviceError> {
        self.live()?;
        // SAFETY: `dst` came from `alloc` with at least `src.len()` bytes (the caller's contract).
        unsafe {
            self.api.check(
                "hipMemcpy (host to device)",
                (self.api.memcpy)(dst.0 as Ptr, src.as_ptr().cast(), src.len(), MEMCPY_HTOD),
            )
        }
    }

    fn download(&mut self, src: DevicePtr, dst: &mut [u8]) -> Result<(), DeviceError> {
        self.live()?;
        // SAFETY: as `upload`.
        unsafe {
            self.api.check(
                "hipMemcpy (device to host)",
                (self.api.memcpy)(
                    dst.as_mut_ptr().cast(),
                    src.0 as *const c_void,
                    dst.len(),
                    MEMCPY_DTOH,
                ),
            )
        }
    }

    fn copy(&mut self, dst: DevicePtr, src: DevicePtr, bytes: usize) -> Result<(), DeviceError> {
        self.live()?;
        // SAFETY: as `upload`.
        unsafe {
            self.api.check(
                "hipMemcpy (device to device)",
                (self.api.memcpy)(dst.0 as Ptr, src.0 as *const c_void, bytes, MEMCPY_DTOD),
            )
        }
    }

    fn differ(
        &mut self,
        a: DevicePtr,
        b: DevicePtr,
        bytes: usize,
    ) -> Result<Option<bool>, DeviceError> {
        self.live()?;
        differ_on(self, a, b, bytes)
    }

    fn memory(&self) -> Option<(u64, u64)> {
        self.live().ok()?;
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: two valid out-pointers.
        let r = unsafe { (self.api.mem_get_info)(&mut free, &mut total) };
        (r == SUCCESS).then_some((free as u64, total as u64))
    }

    fn launch_timed(
        &mut self,
        kernel: KernelHandle,
        launch: &Launch,
        args: &[Vec<u8>],
        count: u32,
    ) -> Result<f64, DeviceError> {
        let count = count.max(1);
        self.live()?;
        let k = self
            .kernels
            .get(kernel.0)
            .ok_or_else(|| DeviceError::Invalid("unknown kernel handle".into()))?;
        if args.len() != k.offsets.len() {
            return Err(DeviceError::Invalid(format!(
                "{} arguments for {} parameters",
                args.len(),
                k.offsets.len()
            )));
        }
        let mut kernarg = vec![0u8; k.kernarg_size as usize];
        for (a, &off) in args.iter().zip(&k.offsets) {
            let end = off as usize + a.len();
            if end > kernarg.len() {
                return Err(DeviceError::Invalid(format!(
                    "argument at offset {off} overruns the {}-byte argument block",
                    kernarg.len()
                )));
            }
            kernarg[off as usize..end].copy_from_slice(a);
        }
        let mut size = kernarg.len();
        let mut extra: [Ptr; 5] = [
            LAUNCH_PARAM_BUFFER_POINTER as Ptr,
            kernarg.as_mut_ptr().cast(),
            LAUNCH_PARAM_BUFFER_SIZE as Ptr,
            (&mut size as *mut usize).cast(),
            LAUNCH_PARAM_END as Ptr,
        ];
        let (start, stop) = self.events;
        let api = Arc::clone(&self.api);
        // SAFETY: the function and events are live; `extra` and `kernarg` outlive the call
        // (HIP copies the argument block at launch).
        unsafe {
            api.check(
                "hipEventRecord",
                (api.event_record)(start, std::ptr::null_mut()),
            )?;
            for _ in 0..count {
                api.check(
                    "hipModuleLaunchKernel",
                    (api.module_launch_kernel)(
                        k.function,
                        launch.grid[0],
                        launch.grid[1],
                        launch.grid[2],
                        launch.block[0],
                        launch.block[1],
                        launch.block[2],
                        launch.shared_bytes,
                        std::ptr::null_mut(),
                        std::ptr::null_mut(),
                        extra.as_mut_ptr(),
                    ),
                )?;
            }
            api.check(
                "hipEventRecord",
                (api.event_record)(stop, std::ptr::null_mut()),
            )?;
        }
        let waited = wait_until("the kernel", self.timeout, || {
            // SAFETY: live event.
            match unsafe { (api.event_query)(stop) } {
                SUCCESS => Ok(true),
                NOT_READY => Ok(false),
                e => Err(api.error("hipEventQuery", e)),
            }
        });
        if let Err(e) = waited {
            self.poisoned = matches!(e, DeviceError::Timeout { .. });
            return Err(e);
        }
        let mut ms = 0f32;
        // SAFETY: both events completed.
        unsafe {
            api.check(
                "hipEventElapsedTime",
                (api.event_elapsed_time)(&mut ms, start, stop),
            )?
        };
        Ok(ms as f64 / count as f64)
    }
}

impl Drop for HipDevice {
    fn drop(&mut self) {
        if self.poisoned {
            return;
        }
        // SAFETY: every handle was created by this device and is released once.
        unsafe {
            for p in self.allocations.drain(..) {
                (self.api.free)(p);
            }
            for m in self.modules.drain(..) {
                (self.api.module_unload)(m);
            }
            (self.api.event_destroy)(self.events.0);
            (self.api.event_destroy)(self.events.1);
        }
    }
}
