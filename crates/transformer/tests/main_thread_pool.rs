//! `backend::main_thread_in_pool`: the calling thread becomes worker 0 of rayon's global pool,
//! which keeps a thread of its own beside it. The pool is process-wide and built once, so this
//! file is its own test binary with one test.

use burn::tensor::{Device, Tensor, TensorData};
use transformer::backend::main_thread_in_pool;

/// `[m, k] x [k, n]` of small integers on flex, large enough for gemm to split it across the
/// pool's threads, against the exact integer product (f32 sums these exactly).
fn product_is_exact(device: &Device) {
    let (m, k, n) = (256, 192, 200);
    let a: Vec<f32> = (0..m * k).map(|i| (i % 7) as f32 - 3.0).collect();
    let b: Vec<f32> = (0..k * n).map(|i| (i % 5) as f32 - 2.0).collect();
    let ta = Tensor::<2>::from_data(TensorData::new(a.clone(), [m, k]), device);
    let tb = Tensor::<2>::from_data(TensorData::new(b.clone(), [k, n]), device);
    let got = ta.matmul(tb).into_data().try_into_vec::<f32>().unwrap();
    for i in 0..m {
        for j in 0..n {
            let want: f32 = (0..k).map(|l| a[i * k + l] * b[l * n + j]).sum();
            assert_eq!(got[i * n + j], want, "element ({i}, {j})");
        }
    }
}

#[test]
fn the_calling_thread_joins_the_pool_and_other_threads_still_get_work_done() {
    // The switch: rayon's default pool is left alone (and not built).
    std::env::set_var("EMBEDLAB_RAYON_DEFAULT", "1");
    assert_eq!(main_thread_in_pool(), Ok(false));
    std::env::remove_var("EMBEDLAB_RAYON_DEFAULT");
    assert_eq!(rayon::current_thread_index(), None);

    // Two threads whatever the machine has, so that the test means the same everywhere.
    std::env::set_var("RAYON_NUM_THREADS", "2");
    assert_eq!(main_thread_in_pool(), Ok(true));
    assert_eq!(rayon::current_thread_index(), Some(0));
    assert_eq!(rayon::current_num_threads(), 2);
    // Once only: the pool is built.
    let e = main_thread_in_pool().unwrap_err();
    assert!(e.contains("rayon's pool"), "{e}");

    let device = Device::flex();
    product_is_exact(&device);
    // Another thread's parallel work, while this one waits outside rayon: the pool's own
    // thread has to do it (a pool of this thread alone would hang here).
    let d = device.clone();
    std::thread::spawn(move || product_is_exact(&d))
        .join()
        .unwrap();
}
