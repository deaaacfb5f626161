//! Where the python-ndn interpreter and the interop scripts are, for every crate's tests that
//! run python-ndn (included with `#[path]`, since integration tests of different crates share
//! no module otherwise).

use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
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
