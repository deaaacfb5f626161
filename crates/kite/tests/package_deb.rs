//! `scripts/package-deb.sh` builds a Debian package of the test build of `kite`: it holds the
//! binary, the default configuration as a conffile, a manual page per subcommand and the
//! completions (and the systemd unit when `dist/systemd/kite.service` exists); unpacked into
//! a throwaway root (and, as root, installed there by dpkg), its binary runs and its
//! configuration checks.

use std::path::Path;
use std::process::Command;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .and_then(Path::parent)
        .expect("the repository holds crates/kite")
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("the command runs");
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_package_holds_binary_config_pages_and_completions_and_runs() {
    if Command::new("dpkg-deb").arg("--version").output().is_err() {
        kite_testkit::skip("dpkg-deb is not installed: no Debian package to build here");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new("bash")
        .arg(repo().join("scripts/package-deb.sh"))
        .args(["--binary", env!("CARGO_BIN_EXE_kite"), "--compress", "gzip"])
        .arg("--out")
        .arg(dir.path())
        .output()
        .expect("the script runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "package-deb.sh: {stderr}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let deb = stdout
        .lines()
        .last()
        .expect("the package's path")
        .to_owned();
    assert!(
        deb.ends_with(".deb") && Path::new(&deb).exists(),
        "{stdout}"
    );

    let info = run(Command::new("dpkg-deb").args(["-I", &deb]));
    assert!(info.contains("Package: kite"), "{info}");
    let version = run(Command::new(env!("CARGO_BIN_EXE_kite")).arg("--version"));
    let version = version.split_whitespace().nth(1).expect("kite VERSION");
    assert!(info.contains(&format!("Version: {version}")), "{info}");
    let arch = run(Command::new("dpkg").arg("--print-architecture"));
    let field = run(Command::new("dpkg-deb").args(["-f", &deb, "Architecture"]));
    assert_eq!(field.trim(), arch.trim());
    let control = tempfile::tempdir().unwrap();
    run(Command::new("dpkg-deb")
        .args(["-e", &deb])
        .arg(control.path()));
    let conffiles = std::fs::read_to_string(control.path().join("conffiles")).unwrap();
    assert_eq!(conffiles.trim(), "/etc/kite/kite.toml");

    let contents = run(Command::new("dpkg-deb").args(["-c", &deb]));
    let files: Vec<&str> = contents
        .lines()
        .filter_map(|l| l.split_whitespace().last())
        .collect();
    for wanted in [
        "./usr/bin/kite",
        "./etc/kite/kite.toml",
        "./usr/share/man/man1/kite.1.gz",
        "./usr/share/man/man1/kite-run.1.gz",
        "./usr/share/man/man1/kite-route-add.1.gz",
        "./usr/share/bash-completion/completions/kite",
        "./usr/share/zsh/vendor-completions/_kite",
        "./usr/share/fish/vendor_completions.d/kite.fish",
        "./usr/share/doc/kite/copyright",
    ] {
        assert!(
            files.contains(&wanted),
            "{wanted} missing from:\n{contents}"
        );
    }
    let unit = "./usr/lib/systemd/system/kite.service";
    if repo().join("dist/systemd/kite.service").exists() {
        assert!(files.contains(&unit), "{contents}");
    } else {
        assert!(!files.contains(&unit), "{contents}");
        assert!(stderr.contains("kite.service is absent"), "{stderr}");
    }

    // Unpacked into a throwaway root: the binary runs, and the default configuration is one
    // `kite run` accepts (no face or route to the example's documentation addresses).
    let root = tempfile::tempdir().unwrap();
    run(Command::new("dpkg-deb").args(["-x", &deb]).arg(root.path()));
    let kite = root.path().join("usr/bin/kite");
    let printed = run(Command::new(&kite).arg("--version"));
    assert_eq!(printed.trim(), format!("kite {version}"));
    let config = root.path().join("etc/kite/kite.toml");
    let effective = run(Command::new(&kite)
        .args(["run", "--print-config", "--config"])
        .arg(&config));
    assert!(!effective.contains("[[face]]"), "{effective}");
    assert!(effective.contains("[face_system.udp]"), "{effective}");
    // As root, dpkg installs it into another throwaway root (its scripts run outside it: the
    // root holds no shell), with the configuration registered as a conffile.
    let uid = run(Command::new("id").arg("-u"));
    if uid.trim() == "0" {
        let target = tempfile::tempdir().unwrap();
        let db = target.path().join("var/lib/dpkg");
        std::fs::create_dir_all(db.join("info")).unwrap();
        std::fs::create_dir_all(db.join("updates")).unwrap();
        std::fs::write(db.join("status"), "").unwrap();
        let dpkg_root = format!("--root={}", target.path().display());
        run(Command::new("dpkg").args([
            &dpkg_root,
            "--force-depends",
            "--force-script-chrootless",
            "-i",
            &deb,
        ]));
        let status = run(Command::new("dpkg").args([&dpkg_root, "-s", "kite"]));
        assert!(status.contains("Status: install ok installed"), "{status}");
        assert!(
            status.contains(" /etc/kite/kite.toml "),
            "a conffile: {status}"
        );
        let printed = run(Command::new(target.path().join("usr/bin/kite")).arg("--version"));
        assert_eq!(printed.trim(), format!("kite {version}"));
    }
    let page = root.path().join("usr/share/man/man1/kite-run.1.gz");
    let text = run(Command::new("gzip").arg("-dc").arg(&page));
    assert!(text.contains(".TH kite-run 1"), "{text}");
}
