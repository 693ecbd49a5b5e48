//! flex's matmul as patched in `vendor/burn-flex` (`vendor/README.md`, "Matmul output"): the
//! output buffer is no longer zeroed before gemm writes it, because gemm is called with
//! `read_dst = false` and stores every element without reading it. If some path of gemm (its
//! matrix-vector kernels, `k == 0`, the split across threads, the batch loop) left an element
//! unwritten or read it first, the product would pick up whatever the allocator handed back.
//!
//! Here that buffer is poisoned with NaN (`FLEX_GEMM_OUT_FILL=NaN`, read once, so this file is
//! its own test binary with one test), and every product of small integers, which f32 computes
//! exactly, must equal the exact integer product: an element left unwritten stays NaN, and one
//! read before it is written turns NaN (NaN * 0 is NaN).

use burn::tensor::{Device, Tensor, TensorData};

/// Small integers in [-3, 3]: every product below sums at most 256 terms of at most 9, far
/// inside f32's exact integers, so gemm's order of summation cannot change a bit.
fn ints(n: usize, seed: usize) -> Vec<f32> {
    (0..n)
        .map(|i| ((i * 7 + seed * 13) % 7) as f32 - 3.0)
        .collect()
}

/// `[batch, m, k] x [batch or 1, k, n]` in exact integer arithmetic, row-major.
fn exact_product(
    a: &[f32],
    b: &[f32],
    batch: usize,
    b_batch: usize,
    m: usize,
    k: usize,
    n: usize,
) -> Vec<f32> {
    let mut out = vec![0f32; batch * m * n];
    for p in 0..batch {
        let bp = if b_batch == 1 { 0 } else { p };
        for i in 0..m {
            for j in 0..n {
                let s: i64 = (0..k)
                    .map(|l| a[(p * m + i) * k + l] as i64 * b[(bp * k + l) * n + j] as i64)
                    .sum();
                out[(p * m + i) * n + j] = s as f32;
            }
        }
    }
    out
}

fn assert_exact(got: Tensor<3>, want: &[f32], what: &str) {
    let got = got.into_data().try_into_vec::<f32>().unwrap();
    assert_eq!(got.len(), want.len(), "{what}: length");
    let wrong: Vec<usize> = (0..got.len())
        .filter(|&i| got[i].to_bits() != want[i].to_bits())
        .collect();
    assert!(
        wrong.is_empty(),
        "{what}: {} of {} elements wrong, first at {} ({} instead of {})",
        wrong.len(),
        got.len(),
        wrong[0],
        got[wrong[0]],
        want[wrong[0]]
    );
}

#[test]
fn matmul_writes_every_output_element_without_reading_it() {
    // Before flex reads it: this binary's only test, and no flex op has run yet.
    std::env::set_var("FLEX_GEMM_OUT_FILL", "NaN");
    let device = Device::flex();
    // (what, batch, rhs batch, m, k, n): each of the patched paths of `matmul.rs`.
    let cases = [
        ("2-D, one thread", 1, 1, 24, 40, 56),
        ("2-D, split across threads by gemm", 1, 1, 256, 192, 200),
        ("2-D, a row times a matrix", 1, 1, 1, 128, 300),
        ("2-D, a matrix times a column", 1, 1, 300, 128, 1),
        ("2-D, k = 0: zeros", 1, 1, 5, 0, 7),
        ("batched, each matrix split by gemm", 2, 2, 256, 192, 200),
        ("batched, matrices split across threads", 64, 64, 32, 48, 32),
        ("batched, broadcast right-hand side", 64, 1, 32, 48, 32),
        ("batched, one thread", 2, 2, 3, 4, 5),
    ];
    for (what, batch, b_batch, m, k, n) in cases {
        let a = ints(batch * m * k, 1);
        let b = ints(b_batch * k * n, 2);
        let want = exact_product(&a, &b, batch, b_batch, m, k, n);
        let ta = Tensor::<3>::from_data(TensorData::new(a.clone(), [batch, m, k]), &device);
        let tb = Tensor::<3>::from_data(TensorData::new(b.clone(), [b_batch, k, n]), &device);
        assert_exact(ta.clone().matmul(tb.clone()), &want, what);
        if batch == 1 {
            // The same product through the 2-D kernel, rank 2 on both sides (made from the data:
            // burn's reshape reads a 0 as "keep this dimension").
            let a2 = Tensor::<2>::from_data(TensorData::new(a.clone(), [m, k]), &device);
            let b2 = Tensor::<2>::from_data(TensorData::new(b.clone(), [k, n]), &device);
            assert_exact(
                a2.matmul(b2).unsqueeze(),
                &want,
                &format!("{what} (rank 2)"),
            );
        }
        // A transposed (strided) left operand: `a` stored as [batch, k, m] and viewed as
        // [batch, m, k]; gemm reads it in place, the output is new.
        let mut a_t = vec![0f32; a.len()];
        for p in 0..batch {
            for i in 0..m {
                for l in 0..k {
                    a_t[(p * k + l) * m + i] = a[(p * m + i) * k + l];
                }
            }
        }
        let strided =
            Tensor::<3>::from_data(TensorData::new(a_t, [batch, k, m]), &device).swap_dims(1, 2);
        assert_exact(strided.matmul(tb), &want, &format!("{what} (strided lhs)"));
    }
}
