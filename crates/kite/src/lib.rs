//! The parts of the `kite` binary that other crates build on: the configuration file parser
//! and validator ([`config`], used by `kite run` and by the fuzz targets), and the text forms
//! of management values it shares with the control commands ([`ctl::format`]).

pub mod config;

/// Text forms shared by the control commands and the configuration file.
pub mod ctl {
    pub mod format;
}
