//! `kite man` writes a manual page for the binary and every subcommand, nested ones included,
//! and each renders without a warning; `kite completions` prints scripts a shell accepts, and
//! bash's completes `kite ro` to `route`.

use std::path::Path;
use std::process::{Command, Output};

fn kite(args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_kite"))
        .args(args)
        .output()
        .expect("kite runs");
    assert!(
        out.status.success(),
        "kite {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The subcommands `--help` lists under `path` (without `help`).
fn subcommands(path: &[&str]) -> Vec<String> {
    let mut args = path.to_vec();
    args.push("--help");
    let help = String::from_utf8(kite(&args).stdout).unwrap();
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_owned)
        .collect()
}

/// Whether `program` can be run (`--version` answers).
fn have(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Renders a page with groff (through preconv, as man does) and returns (text, warnings).
fn render(page: &Path) -> (String, String) {
    let out = Command::new("groff")
        .args(["-k", "-man", "-Tutf8", "-ww"])
        .arg(page)
        .output()
        .expect("groff runs");
    (
        plain(&String::from_utf8_lossy(&out.stdout)),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Text without the terminal's overstrikes (`N\bN` for bold, `_\bx` for underline).
fn plain(text: &str) -> String {
    let mut out: Vec<char> = Vec::with_capacity(text.len());
    for c in text.chars() {
        if c == '\u{8}' {
            out.pop();
        } else {
            out.push(c);
        }
    }
    out.into_iter().collect()
}

#[test]
fn every_subcommand_has_a_manual_page_that_renders() {
    let dir = tempfile::tempdir().unwrap();
    let out = kite(&["man", dir.path().join("man1").to_str().unwrap()]);
    let listed = String::from_utf8(out.stdout).unwrap();
    let man1 = dir.path().join("man1");
    let mut expected = vec![("kite".to_string(), vec![])];
    for sub in subcommands(&[]) {
        for nested in subcommands(&[&sub]) {
            expected.push((format!("kite-{sub}-{nested}"), vec![sub.clone(), nested]));
        }
        expected.push((format!("kite-{sub}"), vec![sub]));
    }
    assert!(
        expected.iter().any(|(p, _)| p == "kite-route-add"),
        "nested subcommands are found: {expected:?}"
    );
    let groff = have("groff");
    for (page, words) in &expected {
        let path = man1.join(format!("{page}.1"));
        assert!(
            path.exists(),
            "{} missing; written:\n{listed}",
            path.display()
        );
        assert!(listed.contains(&format!("{page}.1")), "{listed}");
        if !groff {
            continue;
        }
        let (text, warnings) = render(&path);
        assert!(warnings.is_empty(), "{page}: {warnings}");
        assert!(
            text.contains("NAME") && text.contains("SYNOPSIS"),
            "{page}: {text}"
        );
        let synopsis = format!("kite {}", words.join(" "));
        assert!(
            text.split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .contains(synopsis.trim()),
            "{page}: {text}"
        );
    }
    if !groff {
        eprintln!("groff is not installed: pages checked for presence only");
    }
    if have("man") {
        let out = Command::new("man")
            .arg("-l")
            .arg(man1.join("kite-run.1"))
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "100")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success() && text.contains("--log"), "{text}");
    }
}

#[test]
fn bash_completion_is_valid_and_completes_subcommands() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("kite.bash");
    std::fs::write(&script, kite(&["completions", "bash"]).stdout).unwrap();
    let check = Command::new("bash")
        .arg("-n")
        .arg(&script)
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "bash -n: {}",
        String::from_utf8_lossy(&check.stderr)
    );
    let complete = |words: &str, cword: usize| {
        let snippet = format!(
            "source {}; COMP_WORDS=({words}); COMP_CWORD={cword}; COMP_LINE='{words}'; \
             COMP_POINT=${{#COMP_LINE}}; _kite kite \"${{COMP_WORDS[$COMP_CWORD]}}\" \
             \"${{COMP_WORDS[$((COMP_CWORD-1))]}}\"; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script.display()
        );
        let out = Command::new("bash")
            .arg("-c")
            .arg(snippet)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(complete("kite ro", 1).trim(), "route");
    let verbs = complete("kite route ''", 2);
    for verb in ["add", "list", "remove"] {
        assert!(verbs.lines().any(|l| l == verb), "{verbs}");
    }
    assert!(complete("kite run --lo", 2).lines().any(|l| l == "--log"));
}

#[test]
fn zsh_and_fish_completions_name_the_subcommands() {
    for (shell, checker) in [("zsh", "zsh"), ("fish", "fish")] {
        let text = String::from_utf8(kite(&["completions", shell]).stdout).unwrap();
        assert!(
            text.contains("route") && text.contains("strategy"),
            "{shell}: {text}"
        );
        if have(checker) {
            let dir = tempfile::tempdir().unwrap();
            let script = dir.path().join(format!("kite.{shell}"));
            std::fs::write(&script, &text).unwrap();
            let out = Command::new(checker)
                .arg("-n")
                .arg(&script)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{shell} -n: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}
