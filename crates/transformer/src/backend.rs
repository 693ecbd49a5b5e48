//! The burn device for a backend name. The backend is chosen at run time (burn 0.22 tensors
//! carry no backend type); training adds `.autodiff()` on top.

use burn::tensor::Device;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// burn's maintained pure-Rust CPU backend (simd + rayon): the default.
    Flex,
    /// burn-ndarray (deprecated upstream, kept because users ask for it).
    Ndarray,
    /// wgpu: a GPU, or Mesa's software Vulkan driver (lavapipe) where there is none.
    Wgpu,
}

impl BackendKind {
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Flex => "flex",
            BackendKind::Ndarray => "ndarray",
            BackendKind::Wgpu => "wgpu",
        }
    }

    pub fn device(self) -> Device {
        match self {
            BackendKind::Flex => Device::flex(),
            #[allow(deprecated)]
            BackendKind::Ndarray => Device::ndarray(),
            BackendKind::Wgpu => Device::wgpu(burn::tensor::DeviceKind::DefaultDevice),
        }
    }
}

/// Makes malloc keep freed memory in the process instead of handing it back to the kernel; call
/// it first thing in `main`, before threads start.
///
/// Why: glibc serves blocks above its mmap threshold with a fresh `mmap` and returns them on
/// free. A training step allocates and frees dozens of tensors of several MiB (the masked
/// positions' logits over the vocabulary alone are 307 x 22,546 floats = 28 MiB), so on the CPU
/// backends every step paid for page faults and for the kernel zeroing those pages again: perf
/// put `clear_page_erms` and the page-fault path at ~15% of a flex step, and
/// `cargo run --release -p experiments --example step_phases` measures ~255 ms per masked-LM
/// step with this call against ~310 ms without. Raising the mmap and trim thresholds lets malloc
/// reuse the freed blocks; the resident size stays at one step's peak (~290 MiB for the default
/// model). A no-op where the C library is not glibc.
pub fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes malloc's tuning parameters; it is called before any thread
    // that allocates is started.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 30);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
    }
}
