//! Issue #43 item 4: the words of the sim's report ("clumsy", "stale-view refusals", …) are
//! explained — under the report with `sim --explain`, and in the README's sim section.

use sim::report::GLOSSARY;
use std::process::Command;

/// A short deterministic run of the `sim` binary with these extra flags; its stdout.
fn run(extra: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_sim"))
        .args([
            "--deterministic",
            "--quiet",
            "--agents",
            "2",
            "--duration",
            "2",
        ])
        .args(extra)
        .output()
        .expect("the sim binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn issue43_04_f_sim_explain_prints_a_glossary_line_for_each_row_of_the_report() {
    let stdout = run(&["--explain"]);
    let (table, glossary) = stdout
        .split_once("What the rows mean:")
        .unwrap_or_else(|| panic!("no glossary under the report:\n{stdout}"));
    assert!(table.contains("stale-view refusals"), "{stdout}");
    for (row, meaning) in GLOSSARY {
        assert!(table.contains(row), "{row:?} is not a row of\n{table}");
        let line = glossary
            .lines()
            .find(|l| l.trim_start().starts_with(row))
            .unwrap_or_else(|| panic!("no glossary line for {row:?}:\n{glossary}"));
        assert!(line.contains(meaning), "{line}");
    }
    for word in [
        "clumsy: calls made wrong on purpose",
        "stale-view refusals",
        "calls refused because the agent acted on a view that was out of date",
    ] {
        assert!(glossary.contains(word), "{word:?} not in\n{glossary}");
    }
    // Without --explain, the report says where the glossary is.
    let stdout = run(&[]);
    assert!(!stdout.contains("What the rows mean:"), "{stdout}");
    assert!(stdout.contains("sim --explain"), "{stdout}");
}

#[test]
fn issue43_04_f_the_readme_has_the_same_glossary_in_its_sim_section() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("the README");
    for (row, meaning) in GLOSSARY {
        let line = format!("| {row} | {meaning} |");
        assert!(readme.contains(&line), "the README has no line {line:?}");
    }
}
