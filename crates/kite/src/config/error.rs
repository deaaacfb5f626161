//! Why a configuration file was refused, pointing at the file, line and column.

use std::ops::Range;

use thiserror::Error;

/// Why a configuration file was refused.
#[derive(Debug, Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A key or value is wrong.
    #[error("{path}{at}: {message}{excerpt}")]
    Invalid {
        /// The file.
        path: String,
        /// `:LINE:COLUMN`, when known.
        at: String,
        /// What is wrong.
        message: String,
        /// The offending line, indented, when known.
        excerpt: String,
    },
}

impl ConfigError {
    /// An error about the octets `span` of `text`, the content of `path`.
    pub(super) fn at(path: &str, text: &str, span: Option<Range<usize>>, message: String) -> Self {
        let (at, excerpt) = match span {
            Some(span) => {
                let start = span.start.min(text.len());
                let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
                let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
                let line = text[..start].matches('\n').count() + 1;
                let column = text[line_start..start].chars().count() + 1;
                let source = text[line_start..line_end].trim_end();
                (
                    format!(":{line}:{column}"),
                    format!("\n    {line} | {source}"),
                )
            }
            None => (String::new(), String::new()),
        };
        ConfigError::Invalid {
            path: path.to_owned(),
            at,
            message: message.trim_end().to_owned(),
            excerpt,
        }
    }
}
