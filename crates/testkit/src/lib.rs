//! What the tests of Kite's crates share, once: skips that `scripts/test.sh` counts
//! ([`skip()`]), where python-ndn and the interop scripts are ([`pyndn`]), encoded packets
//! ([`packet`]), programs run to the end and their processor time ([`process`]), network namespaces ([`netns`]) and,
//! with feature `forwarder`, a forwarding thread with virtual faces and a virtual clock (module
//! `forwarder`, and [`forwarder_harness!`] for kite-fw's own unit tests).
//!
//! A dev-dependency only: no crate depends on it to build.

mod harness;
pub mod netns;
pub mod packet;
pub mod process;
pub mod pyndn;
pub mod skip;

#[cfg(feature = "forwarder")]
pub mod forwarder;

pub use skip::{say, skip};

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// The kit stays out of every crate's build: each workspace member lists kite-testkit among
    /// its dev-dependencies at most.
    #[test]
    fn no_crate_depends_on_the_kit_to_build() {
        let root = crate::pyndn::workspace();
        let workspace: toml::Table =
            toml::from_str(&std::fs::read_to_string(root.join("Cargo.toml")).unwrap()).unwrap();
        let members = workspace["workspace"]["members"].as_array().unwrap();
        assert!(members.len() > 5);
        for member in members {
            let manifest = Path::new(member.as_str().unwrap()).join("Cargo.toml");
            let text = std::fs::read_to_string(root.join(&manifest)).unwrap();
            let manifest_toml: toml::Table = toml::from_str(&text).unwrap();
            let mut tables = vec![&manifest_toml];
            if let Some(targets) = manifest_toml.get("target").and_then(|t| t.as_table()) {
                tables.extend(targets.values().filter_map(|t| t.as_table()));
            }
            for table in tables {
                for section in ["dependencies", "build-dependencies"] {
                    let deps = table.get(section).and_then(|d| d.as_table());
                    assert!(
                        !deps.is_some_and(|d| d.contains_key("kite-testkit")),
                        "{}: kite-testkit is a dev-dependency only",
                        manifest.display()
                    );
                }
            }
        }
    }
}
