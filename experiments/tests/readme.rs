//! The README quotes the report: every interval it gives ("0.370 [0.280, 0.461]") is one that
//! results/REPORT.md states, so a regenerated report cannot leave the README's answers behind
//! unnoticed.

/// Every "x [a, b]" in `text` (signs kept, a leading "+" dropped), in order.
fn intervals(text: &str) -> Vec<String> {
    let text = text.replace('+', "");
    let number = |s: &str| -> Option<usize> {
        // The length of a decimal number at the start of `s` ("-0.123"), if there is one.
        let b = s.as_bytes();
        let mut i = usize::from(b.first() == Some(&b'-'));
        let digits = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        i += digits;
        if digits == 0 || b.get(i) != Some(&b'.') {
            return None;
        }
        let frac = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        (frac > 0).then_some(i + 1 + frac)
    };
    let mut out = Vec::new();
    for (start, _) in text.match_indices(" [") {
        // The number before " [".
        let before = &text[..start];
        let from = before
            .char_indices()
            .rev()
            .find(|&(_, c)| !(c.is_ascii_digit() || c == '.' || c == '-'))
            .map_or(0, |(i, c)| i + c.len_utf8());
        let x = &before[from..];
        if x.is_empty() || number(x) != Some(x.len()) {
            continue;
        }
        let rest = &text[start + 2..];
        let Some(a) = number(rest) else { continue };
        let Some(rest2) = rest[a..].strip_prefix(", ") else {
            continue;
        };
        let Some(b) = number(rest2) else { continue };
        if rest2[b..].starts_with(']') {
            out.push(format!("{x} [{}, {}]", &rest[..a], &rest2[..b]));
        }
    }
    out
}

#[test]
fn every_interval_the_readme_gives_is_in_the_report() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let report = std::fs::read_to_string(root.join("results/REPORT.md"))
        .unwrap()
        .replace('+', "");
    let quoted = intervals(&readme);
    assert!(quoted.len() >= 20, "{quoted:?}");
    let missing: Vec<&String> = quoted
        .iter()
        .filter(|q| !report.contains(q.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "README intervals not in results/REPORT.md: {missing:?}"
    );
}

#[test]
fn intervals_are_read_with_their_signs() {
    assert_eq!(
        intervals("gap é0.317 [0.296, 0.338], diff -0.016 [-0.065, 0.034]; +1.101 [+1.029, +1.173]; n [a, b]; 3 [1, 2]"),
        vec![
            "0.317 [0.296, 0.338]",
            "-0.016 [-0.065, 0.034]",
            "1.101 [1.029, 1.173]"
        ]
    );
}

/// The README's bullet on word2vec's rate quotes the rate check's paired differences
/// (results/sweep/word2vec-rate-check*/summary.csv) without brackets (they are not the report's):
/// every signed number in it ("+0.109", "-0.026") is one of summary.csv's differences rounded to
/// three decimals, and every "from 0.452" one of its means, so that a rerun of the check cannot
/// leave the bullet behind unnoticed.
#[test]
fn the_readmes_word2vec_rate_numbers_are_the_rate_checks() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let start = readme
        .find("- **word2vec is not tuned in these rows**")
        .expect("the README's bullet on word2vec's rate");
    let end = start + 2 + readme[start + 2..].find("\n- **").unwrap();
    let bullet = readme[start..end].replace('\n', " ");
    let (mut diffs, mut means) = (Vec::new(), Vec::new());
    // The whole slice's check and the corpus-size arms' (quarter, half).
    for arm in ["", "-quarter", "-half"] {
        let path = root.join(format!(
            "results/sweep/word2vec-rate-check{arm}/summary.csv"
        ));
        let summary = std::fs::read_to_string(&path).unwrap();
        let mut lines = summary.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
        let (diff, mean) = (col("difference"), col("default_mean"));
        for line in lines {
            let f: Vec<&str> = line.split(',').collect();
            diffs.push(format!("{:+.3}", f[diff].parse::<f64>().unwrap()));
            means.push(format!("{:.3}", f[mean].parse::<f64>().unwrap()));
        }
    }
    // Signed numbers: a sign right before "0." (the bullet's differences are all below 1).
    let signed: Vec<String> = bullet
        .match_indices("0.")
        .filter(|&(i, _)| i > 0 && matches!(&bullet[i - 1..i], "+" | "-"))
        .map(|(i, _)| bullet[i - 1..i + 5].to_string())
        .collect();
    assert!(signed.len() >= 10, "{signed:?}");
    for s in &signed {
        assert!(diffs.contains(s), "{s} is not a difference in summary.csv");
    }
    let from: Vec<&str> = bullet
        .match_indices("from 0.")
        .map(|(i, _)| &bullet[i + 5..i + 10])
        .collect();
    assert!(from.len() >= 3, "{from:?}");
    for m in &from {
        assert!(
            means.iter().any(|x| x == m),
            "from {m} is not a mean in summary.csv"
        );
    }
}
