//! Which device a run computes on: the backend a command line names, the device opened and
//! checked (a machine without a wgpu adapter gets an error that says what to do), and the name a
//! benchmark CSV records for it. A leaf: training, the studies and the benchmarks all open their
//! device here.

use std::sync::mpsc;
use std::time::Duration;

use burn::tensor::{Device, Tensor};
use transformer::backend::BackendKind;

use crate::cli::{Args, Backend};

/// The backend `--backend` names, flex when none is named.
pub fn backend(args: &Args) -> BackendKind {
    kind(args.backend.unwrap_or(Backend::Flex))
}

pub fn kind(backend: Backend) -> BackendKind {
    match backend {
        Backend::Flex => BackendKind::Flex,
        Backend::Ndarray => BackendKind::Ndarray,
        Backend::Wgpu => BackendKind::Wgpu,
    }
}

/// How long opening a wgpu device may take before we call it hung (shader compilation on a
/// software rasteriser takes seconds, not minutes).
const OPEN_TIMEOUT: Duration = Duration::from_secs(120);

/// The device for `kind`, checked by running one small computation on it. A machine without a
/// wgpu adapter gets an error that says so and what to do — not a panic and not a hang.
pub fn open(kind: BackendKind) -> anyhow::Result<Device> {
    if kind != BackendKind::Wgpu {
        return Ok(kind.device());
    }
    let advice = "use --backend flex, or install a Vulkan driver (on Debian/Ubuntu without a GPU: \
                  `apt-get install mesa-vulkan-drivers`, a software Vulkan device)";
    let Some(adapter) =
        transformer::backend::choose_adapter(&transformer::backend::probe_adapters())
    else {
        anyhow::bail!(
            "no usable wgpu adapter: wgpu found no GPU or software driver on Vulkan, DX12 or OpenGL; {advice}"
        );
    };
    let allow_gl = std::env::var_os("EMBEDLAB_WGPU_ALLOW_GL").is_some_and(|v| v == "1");
    transformer::backend::check_adapter(&adapter, allow_gl).map_err(anyhow::Error::msg)?;
    eprintln!("wgpu adapter: {adapter}");
    let (tx, rx) = mpsc::channel();
    let previous_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    std::thread::spawn(move || {
        let result = std::panic::catch_unwind(|| {
            let device = kind.device();
            let t = Tensor::<1>::from_floats([1.0, 2.0], &device);
            let sum: f32 = t.sum().into_scalar();
            (device, sum)
        });
        let _ = tx.send(result.map_err(|p| {
            p.downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown failure".into())
        }));
    });
    let answer = rx.recv_timeout(OPEN_TIMEOUT);
    std::panic::set_hook(previous_hook);
    match answer {
        Ok(Ok((device, sum))) if sum == 3.0 => Ok(device),
        Ok(Ok((_, sum))) => anyhow::bail!("wgpu device computed 1 + 2 = {sum}; {advice}"),
        Ok(Err(why)) => anyhow::bail!(
            "no usable wgpu adapter: wgpu found no GPU or software driver, or could not start \
             one (it said: {why}); {advice}"
        ),
        Err(_) => anyhow::bail!(
            "wgpu device did not answer within {} s; {advice}",
            OPEN_TIMEOUT.as_secs()
        ),
    }
}

pub fn name(kind: BackendKind) -> String {
    match kind {
        BackendKind::Wgpu => std::env::var("EMBEDLAB_DEVICE_NAME").unwrap_or_else(|_| {
            transformer::backend::choose_adapter(&transformer::backend::probe_adapters())
                .map_or("wgpu: no adapter".into(), |a| a.to_string())
        }),
        _ => cpu_name(),
    }
}

/// The CPU model from /proc/cpuinfo, so a CSV says what it was measured on.
pub fn cpu_name() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}
