//! The status page (`/`): NFD's general status, faces, channels, routes (FIB and RIB),
//! strategy choices, Content Store and the forwarding shards' queues, as HTML tables
//! rendered here, and a live plot of packets per second in and out that the page's script
//! draws from `/status.json` (no external resources: the template is compiled in).

use std::fmt::Write;

use kite_link::ChannelCounters;
use kite_mgmt_proto::datasets::FaceStatus;
use kite_mgmt_proto::nfd::cs_flag_bit;
use kite_mgmt_server::server::Snapshot;

use crate::ctl::format;

const TEMPLATE: &str = include_str!("status.html");
const MARK: &str = "<!--STATUS-->";

/// Text made safe for HTML element content and quoted attribute values.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A table: header cells (none: no header row), then rows of cells.
fn table(out: &mut String, head: &[&str], rows: impl IntoIterator<Item = Vec<Cell>>) {
    out.push_str("<table>");
    if !head.is_empty() {
        out.push_str("<tr>");
        for h in head {
            let _ = write!(out, "<th>{}</th>", esc(h));
        }
        out.push_str("</tr>");
    }
    for row in rows {
        debug_assert!(
            head.is_empty() || row.len() == head.len(),
            "a row under {head:?}"
        );
        out.push_str("<tr>");
        for c in row {
            match c {
                Cell::Text(t) => {
                    let _ = write!(out, "<td>{}</td>", esc(&t));
                }
                Cell::Num(n) => {
                    let _ = write!(out, "<td class=\"n\">{n}</td>");
                }
                Cell::Id(id, n) => {
                    let _ = write!(out, "<td class=\"n\" id=\"{id}\">{n}</td>");
                }
            }
        }
        out.push_str("</tr>");
    }
    out.push_str("</table>");
}

enum Cell {
    Text(String),
    Num(u64),
    /// A number the page's script updates, by element id.
    Id(&'static str, u64),
}

fn t(s: impl Into<String>) -> Cell {
    Cell::Text(s.into())
}

/// "Showing N of M" when a table was cut.
fn cut(out: &mut String, shown: usize, total: usize, tool: &str) {
    if shown < total {
        let _ = write!(
            out,
            "<p class=\"note\">The first {shown} of {total}; <code>{}</code> lists them all.</p>",
            esc(tool)
        );
    }
}

/// The whole page for `s` (taken with tables).
pub fn render(s: &Snapshot) -> String {
    let (head, tail) = TEMPLATE
        .split_once(MARK)
        .expect("the template has its mark");
    let mut out = String::with_capacity(TEMPLATE.len() + 8192 + 400 * s.faces.len());
    out.push_str(head);
    let g = &s.general;
    let total_in = g.n_in_interests + g.n_in_data + g.n_in_nacks;
    let total_out = g.n_out_interests + g.n_out_data + g.n_out_nacks;
    let _ = write!(
        out,
        "<h1>Kite status</h1><p class=\"sub\">{} &middot; started {} &middot; up {} &middot; \
         as of {}</p>",
        esc(&g.nfd_version),
        format::timestamp(g.start_timestamp),
        format::uptime(g.current_timestamp.saturating_sub(g.start_timestamp)),
        format::timestamp(s.unix_ms),
    );

    out.push_str("<h2>Packets per second</h2>");
    let _ = write!(
        out,
        "<p class=\"legend\" id=\"rates\" data-t=\"{}\" data-in=\"{total_in}\" \
         data-out=\"{total_out}\"><span class=\"in\">in: <span id=\"rate-in\">-</span>/s</span>\
         <span class=\"out\">out: <span id=\"rate-out\">-</span>/s</span></p>\
         <svg id=\"plot\" width=\"640\" height=\"200\" viewBox=\"0 0 640 200\" \
         data-samples=\"0\" role=\"img\" aria-label=\"packets per second in and out\">\
         <text x=\"320\" y=\"100\" text-anchor=\"middle\" fill=\"#888\">waiting for samples\
         </text></svg>",
        s.unix_ms
    );

    out.push_str("<div class=\"grid\"><div><h2>General</h2>");
    table(
        &mut out,
        &["counter", "value"],
        [
            vec![
                t("Interests in"),
                Cell::Id("g-in-interests", g.n_in_interests),
            ],
            vec![t("Data in"), Cell::Id("g-in-data", g.n_in_data)],
            vec![t("Nacks in"), Cell::Id("g-in-nacks", g.n_in_nacks)],
            vec![
                t("Interests out"),
                Cell::Id("g-out-interests", g.n_out_interests),
            ],
            vec![t("Data out"), Cell::Id("g-out-data", g.n_out_data)],
            vec![t("Nacks out"), Cell::Id("g-out-nacks", g.n_out_nacks)],
            vec![
                t("satisfied Interests"),
                Cell::Id("g-satisfied", g.n_satisfied_interests),
            ],
            vec![
                t("unsatisfied Interests"),
                Cell::Id("g-unsatisfied", g.n_unsatisfied_interests),
            ],
            vec![t("PIT entries"), Cell::Id("g-pit", g.n_pit_entries)],
            vec![t("FIB entries"), Cell::Num(g.n_fib_entries)],
        ],
    );
    out.push_str("</div><div><h2>Content Store</h2>");
    let cs = &s.cs;
    table(
        &mut out,
        &[],
        [
            vec![t("capacity"), Cell::Num(cs.capacity)],
            vec![t("entries"), Cell::Id("g-cs", cs.n_cs_entries)],
            vec![t("hits"), Cell::Num(cs.n_hits)],
            vec![t("misses"), Cell::Num(cs.n_misses)],
            vec![
                t("admit / serve"),
                t(format!(
                    "{} / {}",
                    format::cs_flag(cs.flags, cs_flag_bit::ENABLE_ADMIT),
                    format::cs_flag(cs.flags, cs_flag_bit::ENABLE_SERVE)
                )),
            ],
        ],
    );
    out.push_str("</div><div><h2>Forwarding shards</h2>");
    let mode = if s.busy.inline && s.busy.io_threads.len() > 1 {
        "inline in the I/O threads (shard i in I/O thread i mod N)"
    } else if s.busy.inline {
        "inline in the I/O thread"
    } else {
        "in forwarding threads"
    };
    table(
        &mut out,
        &[
            "shard",
            "Interest ring",
            "Data ring",
            "Nack ring",
            "output ring",
            "CoDel marks",
            "busy s",
        ],
        s.threads.iter().enumerate().map(|(i, c)| {
            let q = c.queues;
            let ring = |d: kite_runtime::RingDepth| t(format!("{}/{}", d.len, d.capacity));
            vec![
                Cell::Num(i as u64),
                ring(q.interests),
                ring(q.data),
                ring(q.nacks),
                ring(q.output),
                Cell::Num(c.codel_marked),
                t(format!(
                    "{:.3}",
                    s.busy.shards.get(i).map_or(0.0, |d| d.as_secs_f64())
                )),
            ]
        }),
    );
    let _ = match s.busy.io_threads.len() {
        0 | 1 => write!(
            out,
            "<p class=\"note\">Shards run {mode}; the I/O thread has been busy {:.3} s.</p></div></div>",
            s.busy.io.as_secs_f64()
        ),
        _ => write!(
            out,
            "<p class=\"note\">Shards run {mode}; the I/O threads have been busy {} s, owning {} faces.</p></div></div>",
            (s.busy.io_threads.iter().map(|d| format!("{:.3}", d.as_secs_f64())))
                .collect::<Vec<_>>()
                .join(" / "),
            (s.busy.io_faces.iter().map(usize::to_string))
                .collect::<Vec<_>>()
                .join(" / "),
        ),
    };

    out.push_str("<h2>Faces</h2>");
    faces(&mut out, s);

    if !s.channels.is_empty() {
        out.push_str("<h2>Channels</h2>");
        // The counter columns are named from the counters' own list, so they cannot drift.
        let names = ChannelCounters::default()
            .by_reason()
            .map(|(n, _)| n.replace('_', " "));
        let head: Vec<&str> = core::iter::once("local URI")
            .chain(names.iter().map(String::as_str))
            .chain(core::iter::once("I/O path or certificate"))
            .collect();
        table(
            &mut out,
            &head,
            s.channels.iter().map(|c| {
                let mut row = vec![t(c.local_uri.clone())];
                row.extend(c.counters.by_reason().iter().map(|(_, n)| Cell::Num(*n)));
                row.push(t(c.detail().unwrap_or_default()));
                row
            }),
        );
    }

    if let Some(tables) = &s.tables {
        out.push_str("<div class=\"grid\"><div><h2>FIB</h2>");
        table(
            &mut out,
            &["prefix", "next hops (face, cost)"],
            tables.fib.iter().map(|e| {
                let hops: Vec<String> = e
                    .next_hops
                    .iter()
                    .map(|h| format!("{} ({})", h.face_id, h.cost))
                    .collect();
                vec![t(e.name.to_string()), t(hops.join(", "))]
            }),
        );
        cut(
            &mut out,
            tables.fib.len(),
            g.n_fib_entries as usize,
            "kite fib list",
        );
        out.push_str("</div><div><h2>RIB</h2>");
        table(
            &mut out,
            &["prefix", "face", "origin", "cost", "flags", "expires"],
            tables.rib.iter().flat_map(|e| {
                e.routes.iter().map(move |r| {
                    vec![
                        t(e.name.to_string()),
                        Cell::Num(r.face_id),
                        t(format::origin(r.origin)),
                        Cell::Num(r.cost),
                        t(format::route_flags(r.flags)),
                        t(format::expires(r.expiration_period)),
                    ]
                })
            }),
        );
        cut(
            &mut out,
            tables.rib.len(),
            tables.rib_total,
            "kite route list",
        );
        out.push_str("</div><div><h2>Strategy choices</h2>");
        table(
            &mut out,
            &["prefix", "strategy"],
            tables
                .strategies
                .iter()
                .map(|c| vec![t(c.name.to_string()), t(c.strategy.to_string())]),
        );
        cut(
            &mut out,
            tables.strategies.len(),
            tables.strategies_total,
            "kite strategy list",
        );
        out.push_str("</div></div>");
    }
    out.push_str(
        "<p class=\"note\">Counters for Prometheus: <a href=\"/metrics\">/metrics</a>; \
         this page's poll: <a href=\"/status.json\">/status.json</a>.</p>",
    );
    out.push_str(tail);
    out
}

fn faces(out: &mut String, s: &Snapshot) {
    let shown = s.faces.len().min(super::PAGE_ROWS);
    let row = |(f, q): &(FaceStatus, usize)| {
        let c = &f.counters;
        let drops: u64 = f.counters.drops_by_reason().iter().map(|(_, n)| n).sum();
        vec![
            Cell::Num(f.face_id),
            t(f.uri.clone()),
            t(f.local_uri.clone()),
            t(format!(
                "{} {} {}",
                format::scope(f.face_scope),
                format::persistency(f.face_persistency),
                format::link_type(f.link_type)
            )),
            t(f.state.map_or_else(|| "-".into(), format::face_state)),
            t(format!(
                "{} / {} / {}",
                c.n_in_interests, c.n_in_data, c.n_in_nacks
            )),
            t(format!(
                "{} / {} / {}",
                c.n_out_interests, c.n_out_data, c.n_out_nacks
            )),
            Cell::Num(c.n_in_bytes),
            Cell::Num(c.n_out_bytes),
            Cell::Num(*q as u64),
            Cell::Num(drops),
        ]
    };
    table(
        out,
        &[
            "id",
            "remote URI",
            "local URI",
            "scope, persistency, link",
            "state",
            "in I / D / N",
            "out I / D / N",
            "in octets",
            "out octets",
            "queued",
            "drops",
        ],
        s.faces[..shown].iter().map(row),
    );
    cut(out, shown, s.faces.len(), "kite face list");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(
            esc("<a href=\"x\">&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;"
        );
    }
}
