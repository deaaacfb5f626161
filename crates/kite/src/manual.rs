//! `kite man` and `kite completions`: manual pages and shell completion scripts, generated
//! from the same clap definitions that parse the command line, so they never drift from it.
//!
//! Pages are written by the binary (`kite man DIR`) rather than at build time: a build script
//! would have to repeat or share the definitions, and any installed `kite` can write the
//! pages that match it (the Debian package is built this way).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;

/// Options of `kite man`.
#[derive(Args, Debug)]
pub struct ManArgs {
    /// Directory to write the pages into (created if missing): kite.1, and kite-SUB.1 for
    /// each subcommand (kite-route-add.1 for `kite route add`).
    #[arg(value_name = "DIR", default_value = ".")]
    dir: PathBuf,
}

/// Options of `kite completions`.
#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_name = "SHELL")]
    shell: clap_complete::Shell,
}

/// Writes a page for `cmd` and every visible subcommand; lists the files written.
pub fn man(args: &ManArgs, cmd: clap::Command) -> Result<String> {
    std::fs::create_dir_all(&args.dir)
        .with_context(|| format!("cannot create {}", args.dir.display()))?;
    let mut cmd = cmd.disable_help_subcommand(true);
    cmd.build();
    let mut written = Vec::new();
    write_pages(cmd, &args.dir, &mut written)?;
    Ok(written
        .iter()
        .map(|p| format!("{}\n", p.display()))
        .collect())
}

fn write_pages(cmd: clap::Command, dir: &Path, written: &mut Vec<PathBuf>) -> Result<()> {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        write_pages(sub.clone(), dir, written)?;
    }
    let path = clap_mangen::Man::new(cmd)
        .generate_to(dir)
        .with_context(|| format!("cannot write a manual page in {}", dir.display()))?;
    written.push(path);
    Ok(())
}

/// The completion script for `args.shell`.
pub fn completions(args: &CompletionsArgs, mut cmd: clap::Command) -> Result<String> {
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "kite", &mut out);
    String::from_utf8(out).context("the completion script is not UTF-8")
}
