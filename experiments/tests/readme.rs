//! The README and docs/findings.md quote the report: every interval they give ("0.370 [0.280, 0.461]") is one that
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
    // The README's answers and the findings page it points to, where their numbers stand.
    let readme = ["README.md", "docs/findings.md"]
        .map(|f| std::fs::read_to_string(root.join(f)).unwrap())
        .join("\n");
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
/// each phrase it gives is rebuilt here from the rows it names (model, rate, benchmark, arm) and
/// must stand in the bullet as written, so that a rerun of the check, or a number copied from
/// the wrong row, cannot pass unnoticed.
#[test]
fn the_readmes_word2vec_rate_numbers_are_the_rate_checks() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let start = readme
        .find("- **word2vec trains at twice its default rate**")
        .expect("the README's bullet on word2vec's rate");
    let end = start + 2 + readme[start + 2..].find("\n- **").unwrap();
    let bullet = readme[start..end]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    // One CSV's rows as maps from column to value.
    let read = |path: &str| -> Vec<std::collections::HashMap<String, String>> {
        let text = std::fs::read_to_string(root.join(path)).unwrap();
        let mut lines = text.lines();
        let header: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
        lines
            .map(|l| {
                header
                    .iter()
                    .cloned()
                    .zip(l.split(',').map(String::from))
                    .collect()
            })
            .collect()
    };
    let check = |arm: &str| {
        read(&format!(
            "results/sweep/word2vec-rate-check{arm}/summary.csv"
        ))
    };
    let (whole, quarter) = (check(""), check("-quarter"));
    // A row's `column`, by model, rate and benchmark.
    let at = |rows: &[std::collections::HashMap<String, String>],
              model: &str,
              alpha: f64,
              bench: &str,
              column: &str|
     -> f64 {
        rows.iter()
            .find(|r| {
                r["model"] == model
                    && r["alpha"].parse::<f64>().unwrap() == alpha
                    && r["benchmark"] == bench
            })
            .unwrap_or_else(|| panic!("no {model} {alpha} {bench} row"))[column]
            .parse()
            .unwrap()
    };
    let d =
        |rows, model, alpha, bench| format!("{:+.3}", at(rows, model, alpha, bench, "difference"));
    let from =
        |rows, model, alpha, bench| format!("{:.3}", at(rows, model, alpha, bench, "default_mean"));
    let (ws, men) = ("WS-353-ALL", "MEN-TR-3k");
    let sg = |b| (d(&whole, "sgns", 0.05, b), d(&whole, "sgns", 0.1, b));
    let tied_quarter = read("results/corpus-size/summary.csv")
        .into_iter()
        .find(|r| {
            r["label"] == "a quarter"
                && r["model"] == "transformer-mlm"
                && r["representation"] == "embedding"
                && r["benchmark"] == ws
                && r["quantity"] == "spearman"
        })
        .unwrap()["value"]
        .parse::<f64>()
        .unwrap();
    let phrases = [
        format!(
            "{} / {} on WS-353 (from {})",
            sg(ws).0,
            sg(ws).1,
            from(&whole, "sgns", 0.05, ws)
        ),
        format!(
            "{} / {} on MEN (from {})",
            sg(men).0,
            sg(men).1,
            from(&whole, "sgns", 0.05, men)
        ),
        format!(
            "by {} / {} on WS-353 (from {}; the tied embedding's is {:.3} there)",
            d(&quarter, "sgns", 0.05, ws),
            d(&quarter, "sgns", 0.1, ws),
            from(&quarter, "sgns", 0.05, ws),
            tied_quarter
        ),
    ];
    for p in &phrases {
        assert!(
            bullet.contains(p.as_str()),
            "the bullet does not say {p:?}: {bullet}"
        );
    }
}
