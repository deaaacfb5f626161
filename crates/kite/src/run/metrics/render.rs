//! A [`Snapshot`] as Prometheus text (exposition format 0.0.4) or OpenMetrics 1.0, and as the
//! small JSON document the status page polls. docs/metrics.md lists every metric.

use std::fmt::Write;

use kite_fw::forwarder::DropReason;
use kite_mgmt_server::server::Snapshot;
use serde_json::json;

/// Faces below this id are the built-in ones (internal, Content Store, null), whose counters
/// are always zero: they get no per-face series.
const FIRST_DYNAMIC_FACE: u64 = 256;

/// A metric family's type.
#[derive(Clone, Copy)]
enum Kind {
    Counter,
    Gauge,
}

/// Writes families in either format. Counters are named without `_total` here; their samples
/// get it (OpenMetrics names the family without the suffix, the Prometheus text format with
/// it).
struct Exposition {
    out: String,
    openmetrics: bool,
}

impl Exposition {
    fn family(&mut self, name: &str, kind: Kind, help: &str) {
        let (shown, kind) = match (kind, self.openmetrics) {
            (Kind::Counter, true) => (name.to_string(), "counter"),
            (Kind::Counter, false) => (format!("{name}_total"), "counter"),
            (Kind::Gauge, _) => (name.to_string(), "gauge"),
        };
        let help = help.replace('\\', "\\\\").replace('\n', "\\n");
        let _ = writeln!(self.out, "# HELP {shown} {help}");
        let _ = writeln!(self.out, "# TYPE {shown} {kind}");
    }

    fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: impl std::fmt::Display) {
        self.out.push_str(name);
        if !labels.is_empty() {
            self.out.push('{');
            for (i, (k, v)) in labels.iter().enumerate() {
                if i > 0 {
                    self.out.push(',');
                }
                let _ = write!(self.out, "{k}=\"");
                for c in v.chars() {
                    match c {
                        '\\' => self.out.push_str("\\\\"),
                        '"' => self.out.push_str("\\\""),
                        '\n' => self.out.push_str("\\n"),
                        c => self.out.push(c),
                    }
                }
                self.out.push('"');
            }
            self.out.push('}');
        }
        let _ = writeln!(self.out, " {value}");
    }

    /// A family with one unlabelled sample.
    fn single(&mut self, name: &str, kind: Kind, help: &str, value: impl std::fmt::Display) {
        self.family(name, kind, help);
        match kind {
            Kind::Counter => self.sample(&format!("{name}_total"), &[], value),
            Kind::Gauge => self.sample(name, &[], value),
        }
    }
}

/// Seconds with nanosecond precision.
fn seconds(d: std::time::Duration) -> String {
    format!("{}.{:09}", d.as_secs(), d.subsec_nanos())
}

/// The metrics page: Prometheus text, or OpenMetrics (ending in `# EOF`) when `openmetrics`.
pub fn metrics(s: &Snapshot, openmetrics: bool) -> String {
    let mut e = Exposition {
        out: String::with_capacity(4096 + 2048 * s.faces.len()),
        openmetrics,
    };
    let g = &s.general;
    e.family("kite_build_info", Kind::Gauge, "Kite's version (always 1).");
    e.sample("kite_build_info", &[("version", &g.nfd_version)], 1);
    e.single(
        "kite_start_time_seconds",
        Kind::Gauge,
        "When the forwarder started, in seconds since the Unix epoch (NFD StartTimestamp).",
        format!(
            "{}.{:03}",
            g.start_timestamp / 1000,
            g.start_timestamp % 1000
        ),
    );
    let general = [
        (
            "kite_in_interests",
            "Interests received (NFD NInInterests).",
            g.n_in_interests,
        ),
        ("kite_in_data", "Data received (NFD NInData).", g.n_in_data),
        (
            "kite_in_nacks",
            "Nacks received (NFD NInNacks).",
            g.n_in_nacks,
        ),
        (
            "kite_out_interests",
            "Interests sent (NFD NOutInterests).",
            g.n_out_interests,
        ),
        ("kite_out_data", "Data sent (NFD NOutData).", g.n_out_data),
        (
            "kite_out_nacks",
            "Nacks sent (NFD NOutNacks).",
            g.n_out_nacks,
        ),
        (
            "kite_satisfied_interests",
            "PIT entries satisfied (NFD NSatisfiedInterests).",
            g.n_satisfied_interests,
        ),
        (
            "kite_unsatisfied_interests",
            "PIT entries that expired or were rejected unsatisfied (NFD NUnsatisfiedInterests).",
            g.n_unsatisfied_interests,
        ),
        (
            "kite_cs_hits",
            "Interests answered from the Content Store (NFD NHits).",
            s.cs.n_hits,
        ),
        (
            "kite_cs_misses",
            "Interests the Content Store could not answer (NFD NMisses).",
            s.cs.n_misses,
        ),
    ];
    for (name, help, v) in general {
        e.single(name, Kind::Counter, help, v);
    }
    let sizes = [
        (
            "kite_pit_entries",
            "PIT entries (NFD NPitEntries).",
            g.n_pit_entries,
        ),
        (
            "kite_fib_entries",
            "FIB entries (NFD NFibEntries).",
            g.n_fib_entries,
        ),
        (
            "kite_cs_entries",
            "Content Store entries (NFD NCsEntries).",
            g.n_cs_entries,
        ),
        (
            "kite_cs_capacity",
            "Content Store capacity in packets (NFD Capacity).",
            s.cs.capacity,
        ),
    ];
    for (name, help, v) in sizes {
        e.single(name, Kind::Gauge, help, v);
    }

    e.family(
        "kite_forwarder_drops",
        Kind::Counter,
        "Packets the forwarding pipelines dropped, by reason.",
    );
    for r in DropReason::ALL {
        let n: u64 = s.threads.iter().map(|t| t.forwarder.drops(r)).sum();
        e.sample("kite_forwarder_drops_total", &[("reason", r.as_str())], n);
    }

    face_metrics(&mut e, s);

    e.family(
        "kite_channel_drops",
        Kind::Counter,
        "Datagrams a UDP or Ethernet channel read but handed to no face, by reason.",
    );
    for c in &s.channels {
        for (reason, n) in c.counters.by_reason() {
            e.sample(
                "kite_channel_drops_total",
                &[("local", &c.local_uri), ("reason", reason)],
                n,
            );
        }
    }

    e.family(
        "kite_channel_delayed_frames",
        Kind::Counter,
        "Frames an Ethernet channel read after they waited at least 5 ms in its socket.",
    );
    for c in &s.channels {
        e.sample(
            "kite_channel_delayed_frames_total",
            &[("local", &c.local_uri)],
            c.counters.n_delayed,
        );
    }

    channel_io_metrics(&mut e, s);

    shard_metrics(&mut e, s);

    if openmetrics {
        e.out.push_str("# EOF\n");
    }
    e.out
}

/// Each Ethernet channel's I/O path, and its XDP program's verdicts on AF_XDP.
fn channel_io_metrics(e: &mut Exposition, s: &Snapshot) {
    e.family(
        "kite_channel_info",
        Kind::Gauge,
        "An Ethernet channel's I/O path (always 1): io_path is af_packet or af_xdp, detail \
         how (the XDP mode, copy mode and queues) or why AF_XDP was refused.",
    );
    for c in &s.channels {
        let Some(path) = &c.io_path else { continue };
        let (name, detail) = match path.split_once(" (") {
            Some((name, rest)) => (name, rest.strip_suffix(')').unwrap_or(rest)),
            None => (path.as_str(), ""),
        };
        e.sample(
            "kite_channel_info",
            &[
                ("channel", &c.local_uri),
                ("io_path", name),
                ("detail", detail),
            ],
            1,
        );
    }
    e.family(
        "kite_channel_xdp_frames",
        Kind::Counter,
        "Frames Kite's XDP program saw on an AF_XDP channel's interface, by verdict: ndn \
         (handed to Kite's sockets), udp (datagrams to Kite's UDP listeners, handed to Kite's \
         sockets), passed (anything else, to the kernel), runt (shorter than an Ethernet \
         header, to the kernel).",
    );
    for c in &s.channels {
        let Some(x) = c.xdp else { continue };
        for (verdict, n) in [
            ("ndn", x.ndn),
            ("udp", x.udp),
            ("passed", x.passed),
            ("runt", x.runt),
        ] {
            e.sample(
                "kite_channel_xdp_frames_total",
                &[("channel", &c.local_uri), ("verdict", verdict)],
                n,
            );
        }
    }
}

fn face_metrics(e: &mut Exposition, s: &Snapshot) {
    let faces: Vec<_> = s
        .faces
        .iter()
        .filter(|(f, _)| f.face_id >= FIRST_DYNAMIC_FACE)
        .map(|(f, q)| (f, *q, f.face_id.to_string()))
        .collect();
    let labels = |f: &kite_mgmt_proto::datasets::FaceStatus, id: &str| {
        [
            ("face", id.to_string()),
            ("remote", f.uri.clone()),
            ("local", f.local_uri.clone()),
        ]
    };
    type Get = fn(&kite_link::FaceCounters) -> u64;
    let counters: [(&str, &str, Get); 8] = [
        (
            "kite_face_in_interests",
            "Interests received on the face (NFD NInInterests).",
            |c| c.n_in_interests,
        ),
        (
            "kite_face_in_data",
            "Data received on the face (NFD NInData).",
            |c| c.n_in_data,
        ),
        (
            "kite_face_in_nacks",
            "Nacks received on the face (NFD NInNacks).",
            |c| c.n_in_nacks,
        ),
        (
            "kite_face_out_interests",
            "Interests sent on the face (NFD NOutInterests).",
            |c| c.n_out_interests,
        ),
        (
            "kite_face_out_data",
            "Data sent on the face (NFD NOutData).",
            |c| c.n_out_data,
        ),
        (
            "kite_face_out_nacks",
            "Nacks sent on the face (NFD NOutNacks).",
            |c| c.n_out_nacks,
        ),
        (
            "kite_face_in_bytes",
            "Link-layer octets received on the face (NFD NInBytes).",
            |c| c.n_in_bytes,
        ),
        (
            "kite_face_out_bytes",
            "Link-layer octets written by the face (NFD NOutBytes).",
            |c| c.n_out_bytes,
        ),
    ];
    for (name, help, get) in counters {
        e.family(name, Kind::Counter, help);
        let sample = format!("{name}_total");
        for (f, _, id) in &faces {
            let l = labels(f, id);
            e.sample(&sample, &borrow(&l), get(&f.counters));
        }
    }
    e.family(
        "kite_face_drops",
        Kind::Counter,
        "Packets or frames the face dropped, by reason (as `kite face show` names them).",
    );
    for (f, _, id) in &faces {
        let l = labels(f, id);
        for (reason, n) in f.counters.drops_by_reason() {
            let mut l = borrow(&l).to_vec();
            l.push(("reason", reason));
            e.sample("kite_face_drops_total", &l, n);
        }
    }
    e.family(
        "kite_face_up",
        Kind::Gauge,
        "1 when the face's link is up, 0 when it is down.",
    );
    for (f, _, id) in &faces {
        let up = f.state != Some(kite_mgmt_proto::nfd::FaceState::DOWN);
        e.sample("kite_face_up", &borrow(&labels(f, id)), u8::from(up));
    }
    e.family(
        "kite_face_out_queue_frames",
        Kind::Gauge,
        "Frames waiting in the face's output queue (not yet taken by the socket).",
    );
    for (f, q, id) in &faces {
        e.sample("kite_face_out_queue_frames", &borrow(&labels(f, id)), q);
    }
}

fn borrow<'a>(l: &'a [(&'a str, String); 3]) -> [(&'a str, &'a str); 3] {
    [
        (l[0].0, l[0].1.as_str()),
        (l[1].0, l[1].1.as_str()),
        (l[2].0, l[2].1.as_str()),
    ]
}

fn shard_metrics(e: &mut Exposition, s: &Snapshot) {
    let ids: Vec<String> = (0..s.threads.len()).map(|i| i.to_string()).collect();
    e.family(
        "kite_queue_packets",
        Kind::Gauge,
        "Packets waiting in a forwarding shard's ring (local: /localhost Interests from local \
         faces; output: toward the I/O thread).",
    );
    let rings = |t: &kite_runtime::ThreadCounters| {
        let q = t.queues;
        [
            ("local", q.local),
            ("interest", q.interests),
            ("data", q.data),
            ("nack", q.nacks),
            ("output", q.output),
        ]
    };
    for (t, id) in s.threads.iter().zip(&ids) {
        for (queue, d) in rings(t) {
            e.sample(
                "kite_queue_packets",
                &[("shard", id), ("queue", queue)],
                d.len,
            );
        }
    }
    e.family(
        "kite_queue_capacity_packets",
        Kind::Gauge,
        "Slots of a forwarding shard's ring.",
    );
    for (t, id) in s.threads.iter().zip(&ids) {
        for (queue, d) in rings(t) {
            e.sample(
                "kite_queue_capacity_packets",
                &[("shard", id), ("queue", queue)],
                d.capacity,
            );
        }
    }
    e.family(
        "kite_codel_marks",
        Kind::Counter,
        "Packets CoDel marked with a CongestionMark on a forwarding shard's input rings.",
    );
    for (t, id) in s.threads.iter().zip(&ids) {
        e.sample("kite_codel_marks_total", &[("shard", id)], t.codel_marked);
    }
    e.family(
        "kite_output_dropped",
        Kind::Counter,
        "Packets a forwarding shard dropped on the way out (the I/O thread's ring was full or \
         the face was gone).",
    );
    for (t, id) in s.threads.iter().zip(&ids) {
        e.sample(
            "kite_output_dropped_total",
            &[("shard", id)],
            t.queue_dropped,
        );
    }
    e.family(
        "kite_thread_busy_seconds",
        Kind::Counter,
        "Time a data-plane thread spent in turns that did work (not spinning or sleeping); \
         with inline forwarding the shards run in the I/O threads.",
    );
    if s.busy.io_threads.len() > 1 {
        // Several I/O threads: each under its thread's name.
        for (i, b) in s.busy.io_threads.iter().enumerate() {
            let name = format!("kite-io{i}");
            e.sample(
                "kite_thread_busy_seconds_total",
                &[("thread", &name)],
                seconds(*b),
            );
        }
    } else {
        e.sample(
            "kite_thread_busy_seconds_total",
            &[("thread", "kite-io")],
            seconds(s.busy.io),
        );
    }
    if !s.busy.inline {
        for (i, b) in s.busy.shards.iter().enumerate() {
            let name = format!("kite-fwd{i}");
            e.sample(
                "kite_thread_busy_seconds_total",
                &[("thread", &name)],
                seconds(*b),
            );
        }
    }
    if s.busy.inline && s.busy.io_crossed.len() > 1 {
        e.family(
            "kite_io_crossed",
            Kind::Counter,
            "Packets an I/O thread queued for a forwarding shard another I/O thread runs \
             (inline forwarding): each crossed between threads.",
        );
        for (i, n) in s.busy.io_crossed.iter().enumerate() {
            let name = format!("kite-io{i}");
            e.sample("kite_io_crossed_total", &[("thread", &name)], n);
        }
    }
    e.family(
        "kite_shard_busy_seconds",
        Kind::Counter,
        "Time spent in a forwarding shard's pipelines, in its own thread or inline in kite-io.",
    );
    for (b, id) in s.busy.shards.iter().zip(&ids) {
        e.sample(
            "kite_shard_busy_seconds_total",
            &[("shard", id)],
            seconds(*b),
        );
    }
}

/// The status page's poll: NFD's general counters, the faces' packet totals and busy time.
pub fn json(s: &Snapshot) -> String {
    let g = &s.general;
    let doc = json!({
        "version": g.nfd_version,
        "unix_ms": s.unix_ms,
        "start_ms": g.start_timestamp,
        "in": {"interests": g.n_in_interests, "data": g.n_in_data, "nacks": g.n_in_nacks},
        "out": {"interests": g.n_out_interests, "data": g.n_out_data, "nacks": g.n_out_nacks},
        "satisfied": g.n_satisfied_interests,
        "unsatisfied": g.n_unsatisfied_interests,
        "pit_entries": g.n_pit_entries,
        "fib_entries": g.n_fib_entries,
        "cs": {
            "entries": s.cs.n_cs_entries,
            "capacity": s.cs.capacity,
            "hits": s.cs.n_hits,
            "misses": s.cs.n_misses,
        },
        "faces": s.faces.len(),
        "busy": {
            "io": s.busy.io.as_secs_f64(),
            "shards": s.busy.shards.iter().map(|d| d.as_secs_f64()).collect::<Vec<_>>(),
        },
        // Each I/O thread's busy seconds and the faces it owns.
        "io_threads": (s.busy.io_threads.iter().zip(&s.busy.io_faces))
            .map(|(b, f)| json!({"busy": b.as_secs_f64(), "faces": f}))
            .collect::<Vec<_>>(),
    });
    doc.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exposition(openmetrics: bool) -> String {
        let mut e = Exposition {
            out: String::new(),
            openmetrics,
        };
        e.family("kite_x", Kind::Counter, "Help with \\ and\na newline.");
        e.sample(
            "kite_x_total",
            &[("remote", "a\"b\\c\nd"), ("reason", "r")],
            7,
        );
        e.single("kite_g", Kind::Gauge, "A gauge.", 3);
        e.out
    }

    #[test]
    fn counters_are_named_per_format_and_text_is_escaped() {
        let text = exposition(false);
        assert!(text.contains("# TYPE kite_x_total counter\n"), "{text}");
        assert!(text.contains("# HELP kite_x_total Help with \\\\ and\\na newline.\n"));
        assert!(text.contains("kite_x_total{remote=\"a\\\"b\\\\c\\nd\",reason=\"r\"} 7\n"));
        assert!(text.contains("# TYPE kite_g gauge\nkite_g 3\n"));
        let om = exposition(true);
        assert!(om.contains("# TYPE kite_x counter\n"), "{om}");
        assert!(om.contains("kite_x_total{"));
    }

    #[test]
    fn seconds_keep_nanoseconds() {
        assert_eq!(seconds(std::time::Duration::new(3, 5)), "3.000000005");
    }
}
