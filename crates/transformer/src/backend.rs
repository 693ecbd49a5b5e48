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

    /// `n` devices of this backend for data-parallel training: wgpu's first `n` discrete GPUs
    /// (the default adapter when `n` is 1); flex and ndarray have one CPU device, named `n`
    /// times (each step is then split into `n` shards on it: what CI tests).
    pub fn devices(self, n: usize) -> Vec<Device> {
        match self {
            BackendKind::Wgpu if n > 1 => (0..n)
                .map(|i| Device::wgpu(burn::tensor::DeviceKind::DiscreteGpu(i)))
                .collect(),
            _ => vec![self.device(); n],
        }
    }
}

/// What a wgpu adapter is, as wgpu reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct Adapter {
    pub name: String,
    /// The graphics API: Vulkan, Metal, Dx12, Gl.
    pub api: wgpu::Backend,
    pub device_type: wgpu::DeviceType,
}

impl std::fmt::Display for Adapter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self.device_type {
            wgpu::DeviceType::Cpu => "software, on the CPU",
            wgpu::DeviceType::DiscreteGpu => "discrete GPU",
            wgpu::DeviceType::IntegratedGpu => "integrated GPU",
            wgpu::DeviceType::VirtualGpu => "virtual GPU",
            wgpu::DeviceType::Other => "other",
        };
        write!(f, "{} on {:?} ({kind})", self.name, self.api)
    }
}

/// The graphics APIs burn's wgpu backend tries, in its order (cubecl-wgpu 0.11's
/// `AutoGraphicsApi::chain`).
pub fn api_chain() -> Vec<wgpu::Backend> {
    if cfg!(target_os = "macos") {
        vec![wgpu::Backend::Metal]
    } else {
        vec![
            wgpu::Backend::Vulkan,
            wgpu::Backend::Dx12,
            wgpu::Backend::Gl,
        ]
    }
}

/// The adapter a default wgpu device comes up on, given each API's adapters in chain order:
/// the first API with a hardware adapter, else the first API with any adapter; within it a
/// hardware adapter before a software one (cubecl-wgpu's `resolve_backend` and wgpu's
/// high-performance preference).
pub fn choose_adapter(per_api: &[(wgpu::Backend, Vec<Adapter>)]) -> Option<Adapter> {
    let hardware = |a: &&Adapter| a.device_type != wgpu::DeviceType::Cpu;
    let api = per_api
        .iter()
        .find(|(_, adapters)| adapters.iter().any(|a| hardware(&a)))
        .or_else(|| per_api.iter().find(|(_, adapters)| !adapters.is_empty()))?;
    let adapters = &api.1;
    adapters
        .iter()
        .find(|a| a.device_type == wgpu::DeviceType::DiscreteGpu)
        .or_else(|| adapters.iter().find(hardware))
        .or_else(|| adapters.first())
        .cloned()
}

/// Asks wgpu which adapters each API of [`api_chain`] has here.
pub fn probe_adapters() -> Vec<(wgpu::Backend, Vec<Adapter>)> {
    api_chain()
        .into_iter()
        .filter(|api| wgpu::Instance::enabled_backend_features().contains((*api).into()))
        .map(|api| {
            let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
                backends: api.into(),
                ..wgpu::InstanceDescriptor::new_without_display_handle()
            });
            let adapters = block_on(instance.enumerate_adapters(api.into()))
                .iter()
                .map(|a| {
                    let info = a.get_info();
                    Adapter {
                        name: info.name,
                        api: info.backend,
                        device_type: info.device_type,
                    }
                })
                .collect();
            (api, adapters)
        })
        .collect()
}

/// Whether a wgpu run may use `adapter`. OpenGL is wgpu's fallback where no Vulkan driver is
/// installed: burn's kernels crawl there (and a training run has hung in wgpu-core's poll), so
/// it is used only when asked for with `EMBEDLAB_WGPU_ALLOW_GL=1`.
pub fn check_adapter(adapter: &Adapter, allow_gl: bool) -> Result<(), String> {
    if adapter.api == wgpu::Backend::Gl && !allow_gl {
        return Err(format!(
            "wgpu would fall back to OpenGL ({adapter}): burn's wgpu backend crawls there and can hang. \
             Install a Vulkan driver (a GPU's, or `apt-get install mesa-vulkan-drivers` for a software one), \
             use --backend flex, or set EMBEDLAB_WGPU_ALLOW_GL=1 to use OpenGL anyway"
        ));
    }
    Ok(())
}

/// Runs a future that completes without waiting (wgpu's native adapter enumeration).
fn block_on<F: std::future::Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    loop {
        if let std::task::Poll::Ready(v) = future.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::yield_now();
    }
}

/// Makes `kind` burn's default device for this process (`BURN_DEVICE`); call it in `main`,
/// before any thread starts, once the backend is known.
///
/// Why: burn 0.22.1 materialises a loaded optimiser state on `Device::default()`
/// (`ModuleOptimizer::load_record`) and moves it to the parameters' device at the next step.
/// With the wgpu feature compiled in, the default device is wgpu, so resuming a *flex* run
/// started the Vulkan loader (and printed its complaints, or failed where there is no adapter).
/// Upstream, `load_record` should take the device; until then the default device is pinned.
pub fn pin_default_device(kind: BackendKind) {
    // A plain call in edition 2021; sound because it runs before any other thread exists.
    std::env::set_var("BURN_DEVICE", kind.name());
}

/// Makes malloc keep freed memory in the process instead of handing it back to the kernel; call
/// it first thing in `main`, before threads start.
///
/// Why: glibc serves blocks above its mmap threshold with a fresh `mmap` and returns them on
/// free. A training step allocates and frees dozens of tensors of several MiB (the masked
/// positions' logits over the vocabulary alone are 307 x 22,546 floats = 28 MiB), so on the CPU
/// backends every step paid for page faults and for the kernel zeroing those pages again: perf
/// put `clear_page_erms` and the page-fault path at ~15% of a flex step, and
/// `cargo run -p experiments --example step_phases` measures ~255 ms per masked-LM
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

/// Makes the calling thread one of the threads of rayon's global pool, the pool flex's parallel
/// kernels and gemm's matrix products run on; call it first thing in `main`, before anything
/// uses rayon. Returns whether it did: not where the pool would have fewer than two threads
/// (`RAYON_NUM_THREADS`, else the cores), nor with `EMBEDLAB_RAYON_DEFAULT=1`, which keeps
/// rayon's default pool so that one binary can measure both. An error if the pool is built
/// already.
///
/// Why: by default the pool has a thread per core and the thread that calls a parallel kernel
/// is not one of them. Each of a training step's thousands of parallel calls then hands its
/// work to the pool, puts the caller to sleep and wakes it when the last piece is done: three
/// threads taking turns on two cores, and a sleep and a wake-up per call. With the caller in
/// the pool (rayon's `use_current_thread`), it starts on the work at once and the other thread
/// steals half. The split of the work is the same (the pool has as many threads), so results
/// are bit for bit the same. On a 2-core AVX-512 EPYC, over 30 paired rounds, a masked-LM step
/// took 0.946 of the time (95% CI 0.913-0.997) and the encoder's forward + backward 0.949
/// (0.877-0.982) (`results/bench/avx512/ab-main-in-pool.csv`). PyTorch's OpenMP runs its calling
/// thread as a worker the same way.
///
/// The pool keeps a thread of its own beside the caller, so work another thread hands to the
/// pool while the caller waits outside rayon (burn-train's per-device workers under
/// `--devices N`) is still done, by that thread alone: a multi-device run on the CPU, which only
/// splits each step (flex has one device), loses a thread to this.
pub fn main_thread_in_pool() -> Result<bool, String> {
    if std::env::var_os("EMBEDLAB_RAYON_DEFAULT").is_some_and(|v| v == "1") {
        return Ok(false);
    }
    let threads = std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    if threads < 2 {
        return Ok(false);
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .use_current_thread()
        .build_global()
        .map(|()| true)
        .map_err(|e| format!("cannot make this thread one of rayon's pool: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(name: &str, api: wgpu::Backend, device_type: wgpu::DeviceType) -> Adapter {
        Adapter {
            name: name.into(),
            api,
            device_type,
        }
    }

    #[test]
    fn the_adapter_choice_follows_burns_chain_and_gl_is_refused_unless_asked() {
        use wgpu::{Backend::*, DeviceType::*};
        let lavapipe = a("llvmpipe (LLVM 15)", Vulkan, Cpu);
        let gl = a("llvmpipe (LLVM 15)", Gl, Cpu);
        let gpu = a("NVIDIA H100", Vulkan, DiscreteGpu);
        // A GPU wins over the software Vulkan driver.
        let chosen = choose_adapter(&[
            (Vulkan, vec![lavapipe.clone(), gpu.clone()]),
            (Gl, vec![gl.clone()]),
        ]);
        assert_eq!(chosen, Some(gpu.clone()));
        // Software Vulkan (what CI uses) before OpenGL, and allowed.
        let chosen =
            choose_adapter(&[(Vulkan, vec![lavapipe.clone()]), (Gl, vec![gl.clone()])]).unwrap();
        assert_eq!(chosen, lavapipe);
        assert!(check_adapter(&chosen, false).is_ok());
        assert_eq!(
            chosen.to_string(),
            "llvmpipe (LLVM 15) on Vulkan (software, on the CPU)"
        );
        // Vulkan hidden: OpenGL is what is left, refused unless asked for.
        let chosen =
            choose_adapter(&[(Vulkan, vec![]), (Dx12, vec![]), (Gl, vec![gl.clone()])]).unwrap();
        let e = check_adapter(&chosen, false).unwrap_err();
        assert!(
            e.contains("fall back to OpenGL") && e.contains("EMBEDLAB_WGPU_ALLOW_GL=1"),
            "{e}"
        );
        assert!(check_adapter(&chosen, true).is_ok());
        assert_eq!(choose_adapter(&[(Vulkan, vec![]), (Gl, vec![])]), None);
    }
}
