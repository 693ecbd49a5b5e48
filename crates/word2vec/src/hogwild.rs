//! Hogwild! (Niu et al. 2011): threads update the shared matrices without locks. Updates to a
//! row by two threads at once can lose one of them; with sparse updates on a large vocabulary
//! this is rare and harmless to SGD, and it is what word2vec.c, gensim and fastText all do.
//!
//! Rust does not allow aliased `&mut`, so the matrix hands out rows through a raw pointer; the
//! unsafety is confined here and the races are on plain `f32` stores, never on memory layout.

use std::marker::PhantomData;

pub struct SharedMatrix<'a> {
    ptr: *mut f32,
    rows: usize,
    cols: usize,
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
}
