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
