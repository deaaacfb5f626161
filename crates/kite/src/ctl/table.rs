//! Aligned plain-text output: column tables and key/value blocks.

/// A table with a header row; columns whose cells are all numbers are right-aligned.
pub struct Table {
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column titles.
    pub fn new(header: &[&str]) -> Self {
        Table {
            rows: vec![header.iter().map(|h| h.to_string()).collect()],
        }
    }

    /// Appends a row (as many cells as the header).
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// The table as lines of text, columns two spaces apart, no trailing spaces.
    pub fn render(&self) -> String {
        let columns = self.rows[0].len();
        let width = |c: usize| {
            self.rows
                .iter()
                .map(|r| r.get(c).map_or(0, |s| s.chars().count()))
                .max()
                .unwrap_or(0)
        };
        let widths: Vec<usize> = (0..columns).map(width).collect();
        let numeric: Vec<bool> = (0..columns)
            .map(|c| {
                self.rows.len() > 1
                    && self.rows[1..]
                        .iter()
                        .all(|r| r.get(c).is_some_and(|s| s.parse::<u64>().is_ok()))
            })
            .collect();
        let mut out = String::new();
        for row in &self.rows {
            let mut line = String::new();
            for (c, cell) in row.iter().enumerate() {
                if c > 0 {
                    line.push_str("  ");
                }
                let pad = widths[c].saturating_sub(cell.chars().count());
                if numeric[c] {
                    line.extend(std::iter::repeat_n(' ', pad));
                    line.push_str(cell);
                } else {
                    line.push_str(cell);
                    if c + 1 < row.len() {
                        line.extend(std::iter::repeat_n(' ', pad));
                    }
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

/// `key  value` lines with the keys padded to one width.
pub fn key_values(pairs: &[(&str, String)]) -> String {
    let width = pairs.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    pairs
        .iter()
        .map(|(k, v)| format!("{k:<width$}  {v}\n"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align_and_numbers_go_right() {
        let mut t = Table::new(&["FACEID", "REMOTE", "MTU"]);
        t.row(vec!["1".into(), "internal://".into(), "8800".into()]);
        t.row(vec!["256".into(), "fd://19".into(), "-".into()]);
        assert_eq!(
            t.render(),
            "FACEID  REMOTE       MTU\n     1  internal://  8800\n   256  fd://19      -\n"
        );
    }

    #[test]
    fn key_values_pad_keys() {
        assert_eq!(
            key_values(&[("version", "1".into()), ("uptime", "2s".into())]),
            "version  1\nuptime   2s\n"
        );
    }
}
