//! Hogwild! (Niu et al. 2011): threads update the shared matrices without locks. Updates to a
//! row by two threads at once can lose one of them; with sparse updates on a large vocabulary
//! this is rare and harmless to SGD, and it is what word2vec.c, gensim and fastText all do.
//! [`ThreadRows`] keeps the most frequent rows out of that: private to each thread, merged
//! into the shared matrix under that matrix's lock, the one lock of each matrix.
//!
//! Rust does not allow aliased `&mut`, so the matrix hands out rows through a raw pointer; the
//! unsafety is confined here and the races are on plain `f32` stores, never on memory layout.

use std::marker::PhantomData;
use std::sync::Mutex;

pub struct SharedMatrix<'a> {
    ptr: *mut f32,
    rows: usize,
    cols: usize,
    /// Held while a [`ThreadRows`] copies the shared rows it keeps private or merges into
    /// them: the only reads and writes of those shared rows, one thread at a time, so that no
    /// merged change is lost.
    merging: Mutex<()>,
    _owner: PhantomData<&'a mut [f32]>,
}

// SAFETY: see the module docs: concurrent row updates are the point of hogwild, the matrix's
// allocation outlives every thread (the borrow `'a`), and rows never change size.
unsafe impl Send for SharedMatrix<'_> {}
unsafe impl Sync for SharedMatrix<'_> {}

impl<'a> SharedMatrix<'a> {
    pub fn new(data: &'a mut [f32], cols: usize) -> Self {
        assert!(cols > 0 && data.len() % cols == 0);
        SharedMatrix {
            ptr: data.as_mut_ptr(),
            rows: data.len() / cols,
            cols,
            merging: Mutex::new(()),
            _owner: PhantomData,
        }
    }

    /// A row, writable while other threads may write it too (hogwild).
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    pub fn row(&self, i: u32) -> &'a mut [f32] {
        let i = i as usize;
        assert!(i < self.rows);
        // SAFETY: in bounds by the assert; aliasing is the documented hogwild contract.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(i * self.cols), self.cols) }
    }

    /// Row `i` as a pointer to its first float, for kernels that read and write rows through
    /// pointers (several rows at once, one possibly named twice) without holding references.
    #[inline(always)]
    pub fn row_ptr(&self, i: u32) -> *mut f32 {
        let i = i as usize;
        assert!(i < self.rows);
        // SAFETY: in bounds by the assert.
        unsafe { self.ptr.add(i * self.cols) }
    }

    /// Floats per row.
    pub fn cols(&self) -> usize {
        self.cols
    }
}

/// Rows handed out for hogwild updates: the shared matrix itself, or one thread's view of it
/// ([`ThreadRows`]). The hot loop is compiled for each, so a run that keeps no row private
/// reads its rows as before, without the private rows' lookup.
pub trait Rows {
    /// Row `i`, writable (hogwild: see the module docs).
    #[allow(clippy::mut_from_ref)]
    fn row(&self, i: u32) -> &mut [f32];
    /// Row `i` as a pointer to its first float ([`SharedMatrix::row_ptr`]).
    fn row_ptr(&self, i: u32) -> *mut f32;
    /// Floats per row.
    fn cols(&self) -> usize;
}

impl Rows for SharedMatrix<'_> {
    #[inline(always)]
    fn row(&self, i: u32) -> &mut [f32] {
        SharedMatrix::row(self, i)
    }
    #[inline(always)]
    fn row_ptr(&self, i: u32) -> *mut f32 {
        SharedMatrix::row_ptr(self, i)
    }
    #[inline(always)]
    fn cols(&self) -> usize {
        self.cols
    }
}

impl Rows for ThreadRows<'_, '_> {
    #[inline(always)]
    fn row(&self, i: u32) -> &mut [f32] {
        ThreadRows::row(self, i)
    }
    #[inline(always)]
    fn row_ptr(&self, i: u32) -> *mut f32 {
        ThreadRows::row_ptr(self, i)
    }
    #[inline(always)]
    fn cols(&self) -> usize {
        self.shared.cols
    }
}

/// One thread's view of a [`SharedMatrix`] whose first `hot` rows (the most frequent words:
/// ids are assigned by descending count) live in a private copy, added back to the shared
/// matrix by [`ThreadRows::merge`].
///
/// Why: every noise draw lands on the frequent words' output rows, and every frequent context
/// word's input row is written at each of its positions, so with two threads both cores keep
/// writing the same few rows of either matrix, whose cache lines then have to pass from core
/// to core (the likely cost; docs/performance.md). A private copy turns those writes into
/// local ones; a merge adds what this thread changed since the last merge, `local - base`, to
/// the shared row and starts again from the shared row, which by then holds the other threads'
/// merged changes too. Merges take the matrix's lock, one thread at a time, and are the only writes
/// to the shared copies of the private rows, so no change is lost: each reaches the shared row
/// at the thread's next merge rather than at once (hogwild's concurrent writes to one shared
/// row can lose one). With `hot = 0` every row is the shared one, exactly as
/// [`SharedMatrix::row`]. Memory: two copies of `hot` rows per thread (`local` and `base`).
pub struct ThreadRows<'m, 'a> {
    shared: &'m SharedMatrix<'a>,
    hot: usize,
    /// Rows `0..hot` as this thread sees them.
    local: Vec<f32>,
    /// Rows `0..hot` as they were at the last merge.
    base: Vec<f32>,
    local_ptr: *mut f32,
}

impl<'m, 'a> ThreadRows<'m, 'a> {
    /// A view keeping the first `hot` rows (at most all of them) private, copied now.
    pub fn new(shared: &'m SharedMatrix<'a>, hot: usize) -> Self {
        let hot = hot.min(shared.rows);
        let n = hot * shared.cols;
        let _merging = shared.merging.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: the first `hot` rows are in bounds, and no merge writes them meanwhile (the
        // lock); the other threads write only their own copies of them.
        let mut local = unsafe { std::slice::from_raw_parts(shared.ptr, n) }.to_vec();
        let base = local.clone();
        let local_ptr = local.as_mut_ptr();
        ThreadRows {
            shared,
            hot,
            local,
            base,
            local_ptr,
        }
    }

    /// A row: the private copy for a hot row, the shared row otherwise.
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    pub fn row(&self, i: u32) -> &mut [f32] {
        let i = i as usize;
        assert!(i < self.shared.rows);
        // Whether a noise word is hot is as random as the draw: no branch to mispredict.
        let p = std::hint::select_unpredictable(i < self.hot, self.local_ptr, self.shared.ptr);
        // SAFETY: `i` is in bounds of the shared matrix by the assert, and of the private copy
        // (`hot` rows) when it is chosen; the private copy is this thread's alone and is not
        // reallocated while `self` lives; aliasing is the hogwild contract of the module docs.
        unsafe { std::slice::from_raw_parts_mut(p.add(i * self.shared.cols), self.shared.cols) }
    }

    /// [`ThreadRows::row`] as a pointer to its first float.
    #[inline(always)]
    pub fn row_ptr(&self, i: u32) -> *mut f32 {
        let i = i as usize;
        assert!(i < self.shared.rows);
        let p = std::hint::select_unpredictable(i < self.hot, self.local_ptr, self.shared.ptr);
        // SAFETY: in bounds of the chosen matrix, as in `row`.
        unsafe { p.add(i * self.shared.cols) }
    }

    /// Adds this thread's changes to the hot rows since the last merge to the shared matrix,
    /// and takes the shared rows (with the other threads' merged changes) as the new start.
    pub fn merge(&mut self) {
        let cols = self.shared.cols;
        // A poisoned lock (a thread panicked mid-merge) still serialises: the run ends with the
        // panic anyway.
        let _merging = self
            .shared
            .merging
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        for r in 0..self.hot {
            let shared = self.shared.row(r as u32);
            let span = r * cols..(r + 1) * cols;
            let (local, base) = (&mut self.local[span.clone()], &mut self.base[span]);
            for k in 0..cols {
                shared[k] += local[k] - base[k];
                local[k] = shared[k];
                base[k] = local[k];
            }
        }
        // `row` reads through the pointer: taken again after the `&mut` borrows above.
        self.local_ptr = self.local.as_mut_ptr();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_rows_reach_the_shared_matrix_at_each_merge() {
        // Three rows of two; the first two private to each of two views.
        let mut data = vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let shared = SharedMatrix::new(&mut data, 2);
        let mut a = ThreadRows::new(&shared, 2);
        let mut b = ThreadRows::new(&shared, 2);
        a.row(0)[0] += 10.0;
        b.row(0)[0] += 100.0;
        b.row(1)[1] -= 1.0;
        // A row that is not private is the shared one: written through at once.
        a.row(2)[1] += 0.5;
        assert_eq!(b.row(2), &[5.0, 6.5]);
        // Before a merge the shared rows have neither view's changes, and a view sees its own.
        assert_eq!(shared.row(0), &[1.0, 2.0]);
        assert_eq!(a.row(0), &[11.0, 2.0]);
        a.merge();
        assert_eq!(shared.row(0), &[11.0, 2.0]);
        b.merge();
        // Both changes, each once; `b` now starts from the sum, `a` sees it at its next merge.
        assert_eq!(shared.row(0), &[111.0, 2.0]);
        assert_eq!(shared.row(1), &[3.0, 3.0]);
        assert_eq!(b.row(0), &[111.0, 2.0]);
        assert_eq!(a.row(0), &[11.0, 2.0]);
        a.merge();
        assert_eq!(a.row(0), &[111.0, 2.0]);
        assert_eq!(
            shared.row(0),
            &[111.0, 2.0],
            "a merge with no change adds nothing"
        );
        drop((a, b));
        assert_eq!(data, [111.0, 2.0, 3.0, 3.0, 5.0, 6.5]);
    }

    #[test]
    fn no_private_rows_is_the_shared_matrix_and_more_than_all_is_all() {
        let mut data = vec![0.0; 4];
        let shared = SharedMatrix::new(&mut data, 2);
        let none = ThreadRows::new(&shared, 0);
        none.row(1)[0] = 7.0;
        assert_eq!(shared.row(1), &[7.0, 0.0]);
        let mut all = ThreadRows::new(&shared, 99);
        all.row(1)[1] = 8.0;
        assert_eq!(shared.row(1), &[7.0, 0.0]);
        all.merge();
        assert_eq!(shared.row(1), &[7.0, 8.0]);
    }

    /// Two threads merging the same private row over and over: every change arrives, none
    /// overwritten by a merge racing another.
    #[test]
    fn concurrent_merges_lose_nothing() {
        const COLS: usize = 4096;
        const ROUNDS: usize = 10_000;
        let mut data = vec![0.0f32; 2 * COLS];
        let shared = SharedMatrix::new(&mut data, COLS);
        // Both threads start merging together.
        let start = std::sync::Barrier::new(2);
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    let mut view = ThreadRows::new(&shared, 1);
                    start.wait();
                    for _ in 0..ROUNDS {
                        view.row(0).iter_mut().for_each(|x| *x += 1.0);
                        view.merge();
                    }
                });
            }
        });
        // Whole numbers below 2^24 add exactly in f32.
        assert!(
            shared.row(0).iter().all(|&x| x == (2 * ROUNDS) as f32),
            "{:?}",
            &shared.row(0)[..4]
        );
    }

    #[test]
    #[should_panic(expected = "i < self.shared.rows")]
    fn a_row_past_the_matrix_is_refused_even_when_private_rows_cover_it() {
        let mut data = vec![0.0; 4];
        let shared = SharedMatrix::new(&mut data, 2);
        let view = ThreadRows::new(&shared, 99);
        let _ = view.row(2);
    }
}
