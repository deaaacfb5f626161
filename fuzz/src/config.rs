//! The `kite run` configuration file: any text either parses and passes validation, or is
//! refused with an error that names the file; a configuration that parses prints as TOML
//! that parses back to the same configuration.

use kite::config::Config;

/// Runs one input (UTF-8 text; other octets are not a configuration file).
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match Config::parse(text, "fuzz.toml") {
        Ok(c) => {
            let printed = c.to_toml();
            let again = Config::parse(&printed, "printed.toml")
                .unwrap_or_else(|e| panic!("the printed configuration is refused: {e}\n{printed}"));
            assert_eq!(again, c, "the printed configuration reads back the same");
        }
        Err(e) => {
            let message = e.to_string();
            assert!(
                message.contains("fuzz.toml"),
                "the error names the file: {message}"
            );
        }
    }
}
