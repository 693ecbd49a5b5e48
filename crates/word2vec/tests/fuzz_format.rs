//! Property tests of the vectors reader (word2vec text and binary, GloVe): whatever the bytes,
//! it answers with vectors or with an error naming the file, never a panic or an allocation the
//! file cannot justify; every finite table round-trips bit for bit. proptest keeps any failing
//! input it finds under `proptest-regressions/` and replays it first on every later run.

use proptest::prelude::*;
use word2vec::format::{read_checked, write, Format};
use word2vec::WordVectors;

fn read_bytes(bytes: &[u8]) -> Result<WordVectors, String> {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("fuzz.vec");
    std::fs::write(&p, bytes).unwrap();
    match read_checked(&p) {
        Ok(l) => {
            let v = l.vectors;
            assert_eq!(v.data().len(), v.len() * v.dim());
            assert!(
                v.data().iter().all(|x| x.is_finite()),
                "non-finite value accepted"
            );
            Ok(v)
        }
        Err(e) => {
            let msg = e.to_string();
            assert!(
                msg.contains("fuzz.vec"),
                "error does not name the file: {msg}"
            );
            Err(msg)
        }
    }
}

fn table() -> impl Strategy<Value = WordVectors> {
    (1usize..5, 1usize..6).prop_flat_map(|(dim, n)| {
        (
            proptest::collection::vec("[a-zé]{1,6}", n),
            proptest::collection::vec(
                any::<f32>().prop_filter("finite", |x| x.is_finite()),
                n * dim,
            ),
        )
            .prop_map(move |(words, data)| WordVectors::new(words, dim, data))
    })
}

fn encoded(v: &WordVectors, binary: bool) -> Vec<u8> {
    let mut out = Vec::new();
    if binary {
        word2vec::format::write_binary(v, &mut out).unwrap();
    } else {
        word2vec::format::write_text(v, &mut out).unwrap();
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = read_bytes(&bytes);
    }

    #[test]
    fn headers_with_any_numbers_never_panic_or_overallocate(
        n in any::<u64>(), dim in any::<u64>(), body in proptest::collection::vec(any::<u8>(), 0..64)
    ) {
        let mut bytes = format!("{n} {dim}\n").into_bytes();
        bytes.extend_from_slice(&body);
        let _ = read_bytes(&bytes);
    }

    #[test]
    fn finite_tables_round_trip_exactly(v in table(), binary in any::<bool>()) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(if binary { "t.bin" } else { "t.txt" });
        write(&v, &p, if binary { Format::Binary } else { Format::Text }).unwrap();
        let back = read_checked(&p).unwrap().vectors;
        prop_assert_eq!(back.words(), v.words());
        let bits = |w: &WordVectors| w.data().iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        prop_assert_eq!(bits(&back), bits(&v));
    }

    #[test]
    fn damaged_files_never_panic(
        v in table(), binary in any::<bool>(),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..6)
    ) {
        let mut bytes = encoded(&v, binary);
        for (at, byte, kind) in edits {
            if bytes.is_empty() { break; }
            let i = at.index(bytes.len());
            match kind {
                0 => bytes[i] = byte,
                1 => { bytes.remove(i); }
                _ => bytes.insert(i, byte),
            }
        }
        let _ = read_bytes(&bytes);
    }
}

/// The case the fuzzer found on CI: a binary row whose float bytes read as a word and a number
/// up to a 0x0A byte, so the first row looked like text. It reads back as the binary table.
#[test]
fn a_binary_row_that_looks_like_text_reads_back_as_binary() {
    let v = WordVectors::new(vec!["é".into()], 4, vec![1.837_200_3e38, 0.0, 0.0, 0.0]);
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.bin");
    write(&v, &p, Format::Binary).unwrap();
    let bytes = std::fs::read(&p).unwrap();
    let body = &bytes[bytes.iter().position(|&b| b == b'\n').unwrap() + 1..];
    let line = &body[..body.iter().position(|&b| b == b'\n').unwrap()];
    assert!(
        std::str::from_utf8(line).is_ok(),
        "the planted row must look like text: {line:?}"
    );
    let back = read_checked(&p).unwrap().vectors;
    assert_eq!(back.words(), v.words());
    assert_eq!(
        back.data().iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        v.data().iter().map(|x| x.to_bits()).collect::<Vec<_>>()
    );
}
