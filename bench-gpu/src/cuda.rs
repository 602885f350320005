//! The only module that calls CUDA: loading checks, RAII wrappers and copies.
//!
//! cudarc loads `libcuda` on first use and **panics** when it is absent or lacks a symbol,
//! so [`check_library`] runs before any other call: it asks
//! [`cudarc::driver::sys::is_culib_present`], then looks up every symbol this crate calls,
//! then the driver version; only then is anything called. Every handle is an RAII wrapper
//! that frees its resource on drop, after synchronizing what may still use it:
//!
//! * [`Device`] holds a retained primary context (released on drop);
//! * [`DeviceBuffer`] (`cuMemAlloc`), [`PinnedBuffer`] (`cuMemAllocHost`) and
//!   [`Registration`] (`cuMemHostRegister` of caller memory, unregistered on drop) borrow
//!   their [`Device`], so they cannot outlive it;
//! * [`Stream`] (non-blocking) synchronizes before it is destroyed, and every timed loop
//!   creates its streams itself: when a loop returns (or fails) its copies have completed,
//!   before any buffer it was given can be dropped;
//! * [`Event`] (timing enabled) measures on the GPU's clock.
//!
//! Nothing here is timed; the loops are in [`crate::copy`].

use bench_core::memory::Region;
use cudarc::driver::sys;
use std::ffi::{c_char, c_int, c_void};
use std::marker::PhantomData;

/// Oldest driver API this crate calls (`cuDevicePrimaryCtxRelease_v2` is CUDA 11.0).
pub const MIN_DRIVER_VERSION: i32 = 11000;

/// Every driver symbol called through cudarc by this crate, checked before the first call
/// (cudarc panics on a missing symbol).
pub const SYMBOLS: &[&str] = &[
    "cuGetErrorName",
    "cuGetErrorString",
    "cuDriverGetVersion",
    "cuInit",
    "cuDeviceGetCount",
    "cuDeviceGet",
    "cuDeviceGetName",
    "cuDeviceTotalMem_v2",
    "cuDeviceGetAttribute",
    "cuDeviceGetPCIBusId",
    "cuDevicePrimaryCtxRetain",
    "cuDevicePrimaryCtxRelease_v2",
    "cuCtxSetCurrent",
    "cuCtxSynchronize",
    "cuMemGetInfo_v2",
    "cuMemAlloc_v2",
    "cuMemFree_v2",
    "cuMemAllocHost_v2",
    "cuMemFreeHost",
    "cuMemHostRegister_v2",
    "cuMemHostUnregister",
    "cuMemcpyHtoDAsync_v2",
    "cuMemcpyDtoHAsync_v2",
    "cuStreamCreate",
    "cuStreamSynchronize",
    "cuStreamDestroy_v2",
    "cuStreamWaitEvent",
    "cuLaunchHostFunc",
    "cuEventCreate",
    "cuEventRecord",
    "cuEventSynchronize",
    "cuEventElapsedTime",
    "cuEventDestroy_v2",
];

/// Why CUDA cannot be used on this machine (the GPU family's skip reason).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unavailable {
    /// `libcuda` could not be loaded.
    #[error("no CUDA driver library: libcuda could not be loaded (tried {tried}): no NVIDIA driver is installed, or the directory holding libcuda.so.1 is not on the loader path (LD_LIBRARY_PATH)")]
    NoLibrary {
        /// The first names tried.
        tried: String,
    },
    /// `libcuda` lacks a function this crate calls.
    #[error("the CUDA driver library lacks {symbol}, which cxlchar calls (it uses the driver API of CUDA {} and newer): update the NVIDIA driver", version_string(MIN_DRIVER_VERSION))]
    // Fields named for what they hold.
    #[allow(missing_docs)]
    MissingSymbol { symbol: String },
    /// The driver is older than [`MIN_DRIVER_VERSION`].
    #[error("the CUDA driver is too old: it supports CUDA {}, cxlchar needs {} or newer", version_string(*found), version_string(MIN_DRIVER_VERSION))]
    DriverTooOld {
        /// `cuDriverGetVersion`.
        found: i32,
    },
    /// `cuInit` failed (no device, no kernel module, a driver/library mismatch).
    #[error("the CUDA driver did not initialize: {0}")]
    Init(CudaError),
    /// The driver works but sees no device.
    #[error("no CUDA device: the driver reports 0 GPUs")]
    NoDevice,
    /// A query about the devices failed.
    #[error("{0}")]
    Query(CudaError),
}

/// A failed driver call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{call} failed: {name} ({text})")]
pub struct CudaError {
    /// The driver function.
    pub call: &'static str,
    /// The `CUresult` name (`CUDA_ERROR_OUT_OF_MEMORY`).
    pub name: String,
    /// The driver's description.
    pub text: String,
}

/// `12040` -> `12.4`.
pub fn version_string(v: i32) -> String {
    format!("{}.{}", v / 1000, (v % 1000) / 10)
}

fn check(r: sys::CUresult, call: &'static str) -> Result<(), CudaError> {
    if r == sys::CUresult::CUDA_SUCCESS {
        return Ok(());
    }
    let text = cudarc::driver::result::DriverError(r)
        .error_string()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "no description".into());
    Err(CudaError {
        call,
        name: format!("{r:?}"),
        text,
    })
}

/// Whether `libcuda` can be loaded (cudarc's own search: `libcuda.so`, `libcuda.so.1`, ...).
pub fn library_present() -> bool {
    // SAFETY: `is_culib_present` only tries to dlopen the driver library by its known
    // names and closes it again; loading the NVIDIA driver library runs its initializers,
    // which is what every CUDA program does.
    unsafe { sys::is_culib_present() }
}

fn missing_symbol() -> Option<&'static str> {
    // SAFETY: only called after `library_present()` returned true, so `culib()` loads the
    // library instead of panicking; `get` only looks a name up, nothing is called.
    let lib = unsafe { sys::culib() };
    SYMBOLS
        .iter()
        .copied()
        // SAFETY: a symbol lookup (dlsym); the pointer is dropped unused.
        .find(|s| unsafe { lib.get::<*const c_void>(s.as_bytes()) }.is_err())
}

/// Checks, without calling anything that could panic, that the driver library is there,
/// has every symbol used here and is new enough; returns the driver version.
pub fn check_library() -> Result<i32, Unavailable> {
    if !library_present() {
        let all = cudarc::get_lib_name_candidates("cuda");
        let shown: Vec<&String> = all
            .iter()
            .enumerate()
            .filter(|(i, n)| *i == 0 || n.ends_with(".so.1"))
            .map(|(_, n)| n)
            .collect();
        let names: Vec<&str> = shown.iter().map(|s| s.as_str()).collect();
        return Err(Unavailable::NoLibrary {
            tried: format!(
                "{} and {} other names",
                names.join(", "),
                all.len().saturating_sub(names.len())
            ),
        });
    }
    if let Some(symbol) = missing_symbol() {
        return Err(Unavailable::MissingSymbol {
            symbol: symbol.into(),
        });
    }
    let mut v: c_int = 0;
    // SAFETY: the symbol exists (checked above); `v` is a valid out-pointer.
    let rc = unsafe { sys::cuDriverGetVersion(&mut v) };
    check(rc, "cuDriverGetVersion").map_err(Unavailable::Query)?;
    if v < MIN_DRIVER_VERSION {
        return Err(Unavailable::DriverTooOld { found: v });
    }
    Ok(v)
}

/// [`check_library`], then `cuInit` and the device count (> 0). Returns (driver version,
/// device count).
pub fn init() -> Result<(i32, usize), Unavailable> {
    let version = check_library()?;
    // SAFETY: every symbol was checked; cuInit(0) is the documented first call.
    check(unsafe { sys::cuInit(0) }, "cuInit").map_err(Unavailable::Init)?;
    let mut n: c_int = 0;
    // SAFETY: initialized; `n` is a valid out-pointer.
    check(unsafe { sys::cuDeviceGetCount(&mut n) }, "cuDeviceGetCount")
        .map_err(Unavailable::Query)?;
    if n <= 0 {
        return Err(Unavailable::NoDevice);
    }
    Ok((version, n as usize))
}

fn c_string(buf: &[c_char]) -> String {
    let bytes: Vec<u8> = buf
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| u8::from_ne_bytes(c.to_ne_bytes()))
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Static facts about one device, read without creating a context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceFacts {
    /// Marketing name.
    pub name: String,
    /// Total memory in bytes.
    pub total_mem_bytes: u64,
    /// `cuDeviceGetPCIBusId` as the driver prints it.
    pub pci_bus_id: String,
    /// Compute capability (major, minor).
    pub compute_capability: (i32, i32),
    /// `CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT`: copy engines that can run beside kernels.
    pub copy_engines: i32,
}

fn attribute(dev: sys::CUdevice, a: sys::CUdevice_attribute) -> Result<i32, CudaError> {
    let mut v: c_int = 0;
    // SAFETY: `dev` comes from cuDeviceGet; `v` is a valid out-pointer.
    let rc = unsafe { sys::cuDeviceGetAttribute(&mut v, a, dev) };
    check(rc, "cuDeviceGetAttribute")?;
    Ok(v)
}

fn device_handle(ordinal: usize) -> Result<sys::CUdevice, CudaError> {
    let mut dev: sys::CUdevice = 0;
    // SAFETY: called after `init()`; `dev` is a valid out-pointer; a bad ordinal is an
    // error code, not undefined behaviour.
    let rc = unsafe { sys::cuDeviceGet(&mut dev, ordinal as c_int) };
    check(rc, "cuDeviceGet")?;
    Ok(dev)
}

/// Reads a device's name, memory, bus id and attributes (after [`init`]).
pub fn device_facts(ordinal: usize) -> Result<DeviceFacts, CudaError> {
    let dev = device_handle(ordinal)?;
    let mut name = [0 as c_char; 256];
    // SAFETY: the buffer holds `len` bytes; the driver writes a NUL-terminated string.
    let rc = unsafe { sys::cuDeviceGetName(name.as_mut_ptr(), name.len() as c_int, dev) };
    check(rc, "cuDeviceGetName")?;
    let mut bus = [0 as c_char; 64];
    // SAFETY: as above (the driver needs 13 bytes or more).
    let rc = unsafe { sys::cuDeviceGetPCIBusId(bus.as_mut_ptr(), bus.len() as c_int, dev) };
    check(rc, "cuDeviceGetPCIBusId")?;
    let mut total: usize = 0;
    // SAFETY: valid device and out-pointer.
    let rc = unsafe { sys::cuDeviceTotalMem_v2(&mut total, dev) };
    check(rc, "cuDeviceTotalMem_v2")?;
    use sys::CUdevice_attribute as A;
    Ok(DeviceFacts {
        name: c_string(&name),
        total_mem_bytes: total as u64,
        pci_bus_id: c_string(&bus),
        compute_capability: (
            attribute(dev, A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
            attribute(dev, A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
        ),
        copy_engines: attribute(dev, A::CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT)?,
    })
}

/// One GPU with its primary context retained (released on drop).
#[derive(Debug)]
pub struct Device {
    ordinal: usize,
    dev: sys::CUdevice,
    ctx: sys::CUcontext,
}

// SAFETY: a CUDA context may be made current on any thread (cuCtxSetCurrent); the handle
// is only an identifier and every use makes it current first.
unsafe impl Send for Device {}
// SAFETY: as above; the driver API is thread-safe.
unsafe impl Sync for Device {}

impl Device {
    /// Retains device `ordinal`'s primary context and makes it current (after [`init`]).
    pub fn open(ordinal: usize) -> Result<Device, CudaError> {
        let dev = device_handle(ordinal)?;
        let mut ctx: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: `dev` is valid; `ctx` is a valid out-pointer.
        let rc = unsafe { sys::cuDevicePrimaryCtxRetain(&mut ctx, dev) };
        check(rc, "cuDevicePrimaryCtxRetain")?;
        let d = Device { ordinal, dev, ctx };
        d.make_current()?;
        Ok(d)
    }

    /// The ordinal it was opened with.
    pub fn ordinal(&self) -> usize {
        self.ordinal
    }

    /// Makes this device's context current on the calling thread.
    pub fn make_current(&self) -> Result<(), CudaError> {
        // SAFETY: `ctx` is a retained primary context, alive until drop.
        check(unsafe { sys::cuCtxSetCurrent(self.ctx) }, "cuCtxSetCurrent")
    }

    /// Waits for all work of this context.
    pub fn synchronize(&self) -> Result<(), CudaError> {
        self.make_current()?;
        // SAFETY: a context is current.
        check(unsafe { sys::cuCtxSynchronize() }, "cuCtxSynchronize")
    }

    /// (free, total) device memory in bytes.
    pub fn mem_info(&self) -> Result<(usize, usize), CudaError> {
        self.make_current()?;
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: a context is current; valid out-pointers.
        let rc = unsafe { sys::cuMemGetInfo_v2(&mut free, &mut total) };
        check(rc, "cuMemGetInfo_v2")?;
        Ok((free, total))
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        let _ = self.synchronize();
        // SAFETY: balances the retain in `open`; nothing borrowing this device is alive
        // (every wrapper borrows it).
        let _ = unsafe { sys::cuDevicePrimaryCtxRelease_v2(self.dev) };
    }
}

/// Device memory (`cuMemAlloc`), freed on drop.
#[derive(Debug)]
pub struct DeviceBuffer<'d> {
    dev: &'d Device,
    ptr: sys::CUdeviceptr,
    len: usize,
}

impl<'d> DeviceBuffer<'d> {
    /// Allocates `len` bytes on the device.
    pub fn new(dev: &'d Device, len: usize) -> Result<DeviceBuffer<'d>, CudaError> {
        dev.make_current()?;
        let mut ptr: sys::CUdeviceptr = 0;
        // SAFETY: a context is current; `ptr` is a valid out-pointer.
        let rc = unsafe { sys::cuMemAlloc_v2(&mut ptr, len) };
        check(rc, "cuMemAlloc_v2")?;
        Ok(DeviceBuffer { dev, ptr, len })
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for DeviceBuffer<'_> {
    fn drop(&mut self) {
        // Nothing may still be copying into or out of it.
        let _ = self.dev.synchronize();
        // SAFETY: allocated by cuMemAlloc_v2 in this context, freed once.
        let _ = unsafe { sys::cuMemFree_v2(self.ptr) };
    }
}

/// Host memory that a copy reads or writes: pageable (a `Vec`), pinned by CUDA, or a
/// registered target. Borrows its owner mutably, so the memory outlives the span and
/// nothing in safe Rust aliases it while the span lives.
///
/// A span is a `Copy` handle (the timed loops hand it to several streams and threads),
/// so it gives no safe access to the bytes: the CPU reads and writes them only through
/// the `unsafe` [`read`](Self::read) and [`write`](Self::write), whose contract rules out
/// a race with DMA or with another copy of the span.
#[derive(Debug, Clone, Copy)]
pub struct HostSpan<'a> {
    ptr: *mut u8,
    len: usize,
    _owner: PhantomData<&'a mut [u8]>,
}

// SAFETY: a span only hands out its address and length safely; the bytes are reached by
// DMA (each transfer of a measurement on its own range) and by the `unsafe` read/write,
// whose callers guarantee that nothing else touches the range meanwhile. Sharing the
// handle with the copy threads of one measurement is therefore sound.
unsafe impl Send for HostSpan<'_> {}
// SAFETY: as above.
unsafe impl Sync for HostSpan<'_> {}

impl<'a> HostSpan<'a> {
    /// A span over ordinary (pageable) memory.
    pub fn pageable(mem: &'a mut [u8]) -> HostSpan<'a> {
        HostSpan {
            ptr: mem.as_mut_ptr(),
            len: mem.len(),
            _owner: PhantomData,
        }
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Start address (for placement queries).
    pub fn as_ptr(&self) -> *const u8 {
        self.ptr
    }

    /// The `len` bytes at `off` as a span of their own. Panics past the end.
    pub fn sub(&self, off: usize, len: usize) -> HostSpan<'a> {
        assert!(
            off.checked_add(len).is_some_and(|e| e <= self.len),
            "sub-span past the span"
        );
        HostSpan {
            // SAFETY: in bounds (asserted) of the live span.
            ptr: unsafe { self.ptr.add(off) },
            len,
            _owner: PhantomData,
        }
    }

    /// The span's bytes, for a CPU thread that streams them in place.
    ///
    /// # Safety
    /// While the slice lives, nothing else may read or write the span: no copy from or
    /// into it is in flight or enqueued, and no other thread reaches it through another
    /// copy of this span (or a span overlapping it).
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn as_mut_slice(&self) -> &'a mut [u8] {
        // SAFETY: the span is alive for 'a (its owner is borrowed) and exclusive to the
        // caller while the slice lives (the caller's contract).
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }

    /// Copies `out.len()` bytes at `off` of the span into `out`. Panics past the end.
    ///
    /// # Safety
    /// While it runs, nothing may write `[off, off + out.len())`: no copy into the span
    /// is in flight (the streams that copied into it were synchronized) and no other
    /// thread writes it through another copy of this span.
    pub unsafe fn read(&self, off: usize, out: &mut [u8]) {
        assert!(
            off.checked_add(out.len()).is_some_and(|e| e <= self.len),
            "read past the span"
        );
        // SAFETY: in bounds (asserted); the owner is borrowed for 'a so the memory is
        // alive; nothing writes the range meanwhile (the caller's contract).
        unsafe { std::ptr::copy_nonoverlapping(self.ptr.add(off), out.as_mut_ptr(), out.len()) }
    }

    /// Copies `data` into the span at `off`. Panics past the end.
    ///
    /// # Safety
    /// While it runs, nothing else may read or write `[off, off + data.len())`: no copy
    /// from or into the span is in flight (synchronize the streams first) and no other
    /// thread accesses it through another copy of this span.
    pub unsafe fn write(&self, off: usize, data: &[u8]) {
        assert!(
            off.checked_add(data.len()).is_some_and(|e| e <= self.len),
            "write past the span"
        );
        // SAFETY: in bounds (asserted); the owner is mutably borrowed for 'a, so nothing
        // else in safe Rust aliases it; no DMA or other thread touches the range (the
        // caller's contract).
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.ptr.add(off), data.len()) }
    }
}

/// Page-locked host memory allocated by CUDA (`cuMemAllocHost`), freed on drop.
#[derive(Debug)]
pub struct PinnedBuffer<'d> {
    dev: &'d Device,
    ptr: *mut u8,
    len: usize,
}

impl<'d> PinnedBuffer<'d> {
    /// Allocates `len` bytes of pinned host memory and touches every byte (zero).
    pub fn new(dev: &'d Device, len: usize) -> Result<PinnedBuffer<'d>, CudaError> {
        dev.make_current()?;
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: a context is current; `p` is a valid out-pointer.
        let rc = unsafe { sys::cuMemAllocHost_v2(&mut p, len) };
        check(rc, "cuMemAllocHost_v2")?;
        // SAFETY: the driver returned `len` writable bytes at `p`.
        unsafe { std::ptr::write_bytes(p as *mut u8, 0, len) };
        Ok(PinnedBuffer {
            dev,
            ptr: p as *mut u8,
            len,
        })
    }

    /// The whole buffer as a span.
    pub fn span(&mut self) -> HostSpan<'_> {
        HostSpan {
            ptr: self.ptr,
            len: self.len,
            _owner: PhantomData,
        }
    }
}

impl Drop for PinnedBuffer<'_> {
    fn drop(&mut self) {
        let _ = self.dev.synchronize();
        // SAFETY: allocated by cuMemAllocHost_v2, freed once, no copy in flight.
        let _ = unsafe { sys::cuMemFreeHost(self.ptr as *mut c_void) };
    }
}

/// Caller memory (a target's region) page-locked and mapped for DMA with
/// `cuMemHostRegister(PORTABLE)`: usable by every device's context. Unregistered on drop.
#[derive(Debug)]
pub struct Registration<'d, 'm> {
    dev: &'d Device,
    ptr: *mut u8,
    len: usize,
    _mem: PhantomData<&'m mut [u8]>,
}

impl<'d, 'm> Registration<'d, 'm> {
    /// Registers `mem` (page-aligned start and length work everywhere; the driver
    /// rejects what it cannot pin, e.g. some device or file mappings).
    pub fn new(dev: &'d Device, mem: &'m mut [u8]) -> Result<Registration<'d, 'm>, CudaError> {
        dev.make_current()?;
        // SAFETY: `mem` is valid for its length and stays borrowed (so mapped) until this
        // registration is dropped, which unregisters it.
        let rc = unsafe {
            sys::cuMemHostRegister_v2(
                mem.as_mut_ptr() as *mut c_void,
                mem.len(),
                sys::CU_MEMHOSTREGISTER_PORTABLE,
            )
        };
        check(rc, "cuMemHostRegister_v2")?;
        Ok(Registration {
            dev,
            ptr: mem.as_mut_ptr(),
            len: mem.len(),
            _mem: PhantomData,
        })
    }

    /// Registers a cxlchar memory target's region (bench-core's one owner of mappings).
    /// A window mapped read-only cannot be registered (a device-to-host copy writes it).
    pub fn of_region(
        dev: &'d Device,
        region: &'m mut Region,
    ) -> Result<Registration<'d, 'm>, CudaError> {
        if !region.is_writable() {
            return Err(CudaError {
                call: "cuMemHostRegister_v2",
                name: "read-only mapping".into(),
                text: format!(
                    "{} is mapped read-only: a copy from the device would write it",
                    region.origin()
                ),
            });
        }
        Self::new(dev, region.as_mut_slice())
    }

    /// The registered memory as a span.
    pub fn span(&mut self) -> HostSpan<'_> {
        HostSpan {
            ptr: self.ptr,
            len: self.len,
            _owner: PhantomData,
        }
    }
}

impl Drop for Registration<'_, '_> {
    fn drop(&mut self) {
        let _ = self.dev.synchronize();
        // SAFETY: registered in `new`, unregistered once; no copy in flight.
        let _ = unsafe { sys::cuMemHostUnregister(self.ptr as *mut c_void) };
    }
}

/// Copy direction: bench-core's, which `mem interference` shares with the GPU's copies.
pub use bench_core::dma::DmaDir as Dir;

/// A non-blocking stream; synchronized, then destroyed, on drop.
#[derive(Debug)]
pub struct Stream<'d> {
    dev: &'d Device,
    s: sys::CUstream,
}

impl<'d> Stream<'d> {
    /// Creates a stream that does not synchronize with the legacy default stream.
    pub fn new(dev: &'d Device) -> Result<Stream<'d>, CudaError> {
        dev.make_current()?;
        let mut s: sys::CUstream = std::ptr::null_mut();
        // SAFETY: a context is current; valid out-pointer; flag 1 = CU_STREAM_NON_BLOCKING.
        let rc = unsafe {
            sys::cuStreamCreate(&mut s, sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32)
        };
        check(rc, "cuStreamCreate")?;
        Ok(Stream { dev, s })
    }

    /// Enqueues a copy of `len` bytes between `host[host_off..]` and `dev[dev_off..]`.
    /// Bounds are checked. The memory stays valid until the copy completes: device
    /// buffers, pinned buffers and registrations synchronize their context before they
    /// are freed or unregistered, and a copy from or to pageable memory returns only
    /// once the host memory is no longer needed (the driver stages `HtoD` before
    /// returning and completes `DtoH` before returning).
    pub fn copy(
        &self,
        dir: Dir,
        dev: &DeviceBuffer<'_>,
        dev_off: usize,
        host: HostSpan<'_>,
        host_off: usize,
        len: usize,
    ) -> Result<(), CudaError> {
        assert!(dev_off + len <= dev.len, "device range out of bounds");
        assert!(host_off + len <= host.len, "host range out of bounds");
        let d = dev.ptr + dev_off as u64;
        // SAFETY: both ranges are in bounds (asserted) of live allocations (borrowed);
        // the stream belongs to the current-able context of `dev`'s device.
        let r = unsafe {
            let h = host.ptr.add(host_off);
            match dir {
                Dir::H2d => sys::cuMemcpyHtoDAsync_v2(d, h as *const c_void, len, self.s),
                Dir::D2h => sys::cuMemcpyDtoHAsync_v2(h as *mut c_void, d, len, self.s),
            }
        };
        check(
            r,
            match dir {
                Dir::H2d => "cuMemcpyHtoDAsync_v2",
                Dir::D2h => "cuMemcpyDtoHAsync_v2",
            },
        )
    }

    /// Makes the work enqueued after this call wait until `e` (as last recorded) completes.
    pub fn wait(&self, e: &Event<'_>) -> Result<(), CudaError> {
        // SAFETY: both handles are alive; flags 0 = CU_EVENT_WAIT_DEFAULT.
        let rc = unsafe { sys::cuStreamWaitEvent(self.s, e.e, 0) };
        check(rc, "cuStreamWaitEvent")
    }

    /// Waits for everything enqueued.
    pub fn synchronize(&self) -> Result<(), CudaError> {
        // SAFETY: a live stream.
        let rc = unsafe { sys::cuStreamSynchronize(self.s) };
        check(rc, "cuStreamSynchronize")
    }
}

impl Drop for Stream<'_> {
    fn drop(&mut self) {
        let _ = self.dev.make_current();
        let _ = self.synchronize();
        // SAFETY: created in `new`, destroyed once, idle.
        let _ = unsafe { sys::cuStreamDestroy_v2(self.s) };
    }
}

/// A timing event.
#[derive(Debug)]
pub struct Event<'d> {
    dev: &'d Device,
    e: sys::CUevent,
}

impl<'d> Event<'d> {
    /// Creates an event with timing enabled (`CU_EVENT_DEFAULT`).
    pub fn new(dev: &'d Device) -> Result<Event<'d>, CudaError> {
        dev.make_current()?;
        let mut e: sys::CUevent = std::ptr::null_mut();
        // SAFETY: a context is current; valid out-pointer; flags 0 = CU_EVENT_DEFAULT.
        check(unsafe { sys::cuEventCreate(&mut e, 0) }, "cuEventCreate")?;
        Ok(Event { dev, e })
    }

    /// Records the event on `stream` (a stream of the same device).
    pub fn record(&self, stream: &Stream<'_>) -> Result<(), CudaError> {
        // SAFETY: both handles are alive and belong to the same context.
        let rc = unsafe { sys::cuEventRecord(self.e, stream.s) };
        check(rc, "cuEventRecord")
    }

    /// Waits until the event has completed.
    pub fn synchronize(&self) -> Result<(), CudaError> {
        // SAFETY: a live event.
        let rc = unsafe { sys::cuEventSynchronize(self.e) };
        check(rc, "cuEventSynchronize")
    }

    /// Nanoseconds from `self` to `end` on the GPU's clock (both recorded and complete,
    /// same context; resolution about 0.5 us). May be negative across streams.
    pub fn elapsed_ns(&self, end: &Event<'_>) -> Result<f64, CudaError> {
        let mut ms: f32 = 0.0;
        // SAFETY: both events are alive; the driver reports an error if either is not
        // complete or belongs to another context.
        let rc = unsafe { sys::cuEventElapsedTime(&mut ms, self.e, end.e) };
        check(rc, "cuEventElapsedTime")?;
        Ok(f64::from(ms) * 1e6)
    }
}

impl Drop for Event<'_> {
    fn drop(&mut self) {
        let _ = self.dev.make_current();
        // SAFETY: created in `new`, destroyed once (the driver defers the release of an
        // incomplete event).
        let _ = unsafe { sys::cuEventDestroy_v2(self.e) };
    }
}

/// The longest a closed [`Gate`] holds its stream (a safety bound: the host opens it as
/// soon as every gated copy is enqueued).
pub const GATE_MAX_HOLD: std::time::Duration = std::time::Duration::from_secs(10);

/// A start line on one device: streams that [`Stream::wait`] on its [`Gate::event`] while
/// it is closed start together when the host opens it, so that every gated copy is
/// enqueued before any begins. Closing enqueues, on the gate's own stream, a host function
/// that spins until [`Gate::open`] (at most [`GATE_MAX_HOLD`]), then the gate event: its
/// time on the GPU's clock is the common start of the gated copies.
#[derive(Debug)]
pub struct Gate<'d> {
    // Dropped in this order: the stream synchronizes (the host function has returned)
    // before the flag it reads is freed.
    stream: Stream<'d>,
    event: Event<'d>,
    open: Box<std::sync::atomic::AtomicBool>,
}

/// The host function of a closed gate. Spins until the flag is set (bounded); calls no
/// CUDA function (the driver forbids it in host functions).
unsafe extern "C" fn hold(flag: *mut c_void) {
    // SAFETY: `flag` is the address of the gate's boxed flag, freed only after the gate's
    // stream (which runs this function) has synchronized.
    let open = unsafe { &*(flag as *const std::sync::atomic::AtomicBool) };
    let t0 = std::time::Instant::now();
    while !open.load(std::sync::atomic::Ordering::Acquire) && t0.elapsed() < GATE_MAX_HOLD {
        std::hint::spin_loop();
    }
}

impl<'d> Gate<'d> {
    /// A gate on `dev`, open.
    pub fn new(dev: &'d Device) -> Result<Gate<'d>, CudaError> {
        Ok(Gate {
            stream: Stream::new(dev)?,
            event: Event::new(dev)?,
            open: Box::new(std::sync::atomic::AtomicBool::new(true)),
        })
    }

    /// Closes the gate: work that waits on [`Gate::event`] from now on starts only after
    /// [`Gate::open`].
    pub fn close(&self) -> Result<(), CudaError> {
        self.open.store(false, std::sync::atomic::Ordering::Release);
        let flag = &*self.open as *const std::sync::atomic::AtomicBool as *mut c_void;
        // SAFETY: a live stream; `hold` reads the boxed flag, which outlives the stream's
        // last synchronization (field order); it calls no CUDA function.
        let rc = unsafe { sys::cuLaunchHostFunc(self.stream.s, Some(hold), flag) };
        if let Err(e) = check(rc, "cuLaunchHostFunc") {
            self.open();
            return Err(e);
        }
        self.event.record(&self.stream).inspect_err(|_| self.open())
    }

    /// Opens the gate: the gated work starts.
    pub fn open(&self) {
        self.open.store(true, std::sync::atomic::Ordering::Release);
    }

    /// The gate event (recorded when the gate opens).
    pub fn event(&self) -> &Event<'d> {
        &self.event
    }
}

impl Drop for Gate<'_> {
    fn drop(&mut self) {
        // Never leave a host function spinning: the stream synchronizes next.
        self.open();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_read_like_cuda() {
        assert_eq!(version_string(12040), "12.4");
        assert_eq!(version_string(11000), "11.0");
        assert_eq!(version_string(12080), "12.8");
    }

    #[test]
    fn library_check_never_panics_and_names_libcuda_when_absent() {
        match check_library() {
            Ok(v) => assert!(v >= MIN_DRIVER_VERSION),
            Err(e) if !library_present() => {
                let s = e.to_string();
                assert!(s.contains("libcuda"), "{s}");
                assert!(matches!(e, Unavailable::NoLibrary { .. }));
            }
            Err(e) => {
                // A library that is present but unusable says why.
                assert!(!e.to_string().is_empty())
            }
        }
    }

    #[test]
    fn init_without_library_is_an_error_not_a_panic() {
        if !library_present() {
            assert!(matches!(init(), Err(Unavailable::NoLibrary { .. })));
        }
    }
}
