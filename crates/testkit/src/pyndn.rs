//! Where the python-ndn interpreter and the interop scripts are, for every crate's tests that
//! run python-ndn, and the vector generation those scripts share.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The workspace's root directory.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The interpreter with python-ndn: `KITE_PYTHON`, else the workspace's `.venv`.
pub fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("KITE_PYTHON") {
        return p.into();
    }
    let venv = workspace().join(".venv/bin/python");
    assert!(
        venv.exists(),
        "python-ndn is needed: run scripts/test.sh (it creates .venv) or set KITE_PYTHON"
    );
    venv
}

/// The python side of a test, `tests/interop/<file>`.
pub fn interop_script(file: &str) -> PathBuf {
    workspace().join("tests/interop").join(file)
}

/// The JSON array `tests/interop/<script> ARGS --out FILE` writes to FILE: the cases (test
/// vectors, commands) python-ndn made.
///
/// # Panics
///
/// When python-ndn does not run, fails or writes no JSON array.
pub fn cases(script: &str, args: &[&str]) -> Vec<Value> {
    let stem = Path::new(script)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("cases");
    let out = std::env::temp_dir().join(format!("kite-{stem}-{}.json", std::process::id()));
    let status = Command::new(python())
        .arg(interop_script(script))
        .args(args)
        .arg("--out")
        .arg(&out)
        .status()
        .expect("run python");
    assert!(status.success(), "python-ndn: {script} {args:?} failed");
    let cases = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    std::fs::remove_file(&out).ok();
    cases
}
