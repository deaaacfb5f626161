//! Where NDNts is: the node interpreter (`KITE_NODE`, else `node` on the PATH) and the @ndn/*
//! packages pinned by `tests/interop/ndnts/package-lock.json`, which `scripts/test.sh`
//! installs with `npm ci`. Without either, a test skips ([`kite_testkit::skip()`]).

use std::path::PathBuf;
use std::process::{Command, Stdio};

use kite_testkit::pyndn::interop_script;
use kite_testkit::skip;

/// The directory of the NDNts applications and their `node_modules`.
pub fn dir() -> PathBuf {
    interop_script("ndnts")
}

/// The node interpreter.
pub fn node() -> PathBuf {
    std::env::var_os("KITE_NODE").map_or_else(|| "node".into(), PathBuf::from)
}

/// The NDNts side of a test, `tests/interop/ndnts/ndnts_daemon.mjs`.
pub fn script() -> PathBuf {
    dir().join("ndnts_daemon.mjs")
}

/// Whether node runs and the packages are installed; when not, the test skips, saying why.
pub fn available() -> bool {
    let runs = Command::new(node())
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !runs {
        skip(format_args!(
            "{} does not run (set KITE_NODE or install Node.js; scripts/test.sh does)",
            node().display()
        ));
        return false;
    }
    let installed = dir().join("node_modules/@ndn/endpoint/package.json");
    if !installed.exists() {
        skip(format_args!(
            "NDNts is not installed: no {} (run npm ci in {}; scripts/test.sh does)",
            installed.display(),
            dir().display()
        ));
        return false;
    }
    true
}
