//! What NFD answers for CanBePrefix Interests, through a real `kite run`, with producers and
//! consumers of two independent libraries (python-ndn and NDNts), at one forwarding shard and
//! at four (in the I/O thread and in threads of their own):
//! - a CanBePrefix Interest is answered from the Content Store by Data under its name that an
//!   exact Interest fetched;
//! - a one-component CanBePrefix name (shorter than the dispatch prefix) and the longer Data it
//!   fetches may live in different shards: an exact Interest for that Data is answered from the
//!   CS, and a CanBePrefix Interest for the short name finds Data an exact Interest cached;
//! - an exact and a CanBePrefix Interest for one name are two PIT entries, each forwarded: the
//!   longer Data answers only the CanBePrefix consumer, and the exact one gets its own Data
//!   without retransmitting.
//!
//! Where only the CS may answer, the producer has been stopped and its face is gone, so any
//! other answer is a Nack or a timeout. Ignored by a plain `cargo test`; `scripts/test.sh` runs
//! them (KITE_PYTHON names the interpreter with python-ndn; NDNts is `npm ci`'d in
//! tests/interop/ndnts, and without it those tests say SKIPPED).

mod common;

use std::time::Duration;

use common::{app, App, Daemon, Lib, Producer};
use serde_json::Value;

/// Every lifetime of an Interest that must be answered: far longer than any answer takes.
const LONG: &str = "lifetime=10000";
/// How long the producer may take to see an Interest a consumer has sent.
const SEEN: Duration = Duration::from_secs(30);

/// `kite run` with `shards` forwarding shards, run in the I/O thread or not.
fn daemon(shards: u8, inline: bool) -> Daemon {
    let threads = shards.to_string();
    let inline = inline.to_string();
    Daemon::local(&["--threads", &threads, "--inline", &inline])
}

/// A get step with a long lifetime: `flags` ("plain", "prefix", "fresh,prefix") and a name.
fn step(flags: &str, name: &str) -> String {
    format!("{flags},{LONG}:{name}")
}

/// Runs `lib`'s consumer for `steps` on `kite`.
fn get(lib: Lib, kite: &Daemon, steps: &[String]) -> Vec<Value> {
    let mut args = vec!["get", kite.socket()];
    args.extend(steps.iter().map(String::as_str));
    let got = app(lib, &args);
    assert_eq!(got.len(), steps.len(), "one answer per step: {got:?}");
    got
}

/// Asserts a consumer's answer is the Data `name` with `content`.
fn assert_data(got: &Value, name: &str, content: &str, what: &str) {
    assert_eq!(
        (got["name"].as_str(), got["content"].as_str()),
        (Some(name), Some(content)),
        "{what}: {got}"
    );
}

/// (name, CanBePrefix) of each Interest a producer saw, in order.
fn interests(seen: &[Value]) -> Vec<(String, bool)> {
    seen.iter()
        .map(|i| {
            let name = i["interest"]
                .as_str()
                .expect("an Interest line")
                .to_string();
            (name, i["can_be_prefix"] == true)
        })
        .collect()
}

/// A producer serves /p/a/b; an exact Interest fetches it; then CanBePrefix Interests for /p/a
/// (with and without MustBeFresh: the Data is fresh for ten minutes) are answered from the CS,
/// first while the producer still runs (and sees nothing), then once it is gone. An exact
/// Interest for /p/a is not answered by /p/a/b.
fn exact_fetch_answers_prefix_from_cs(lib: Lib, shards: u8, inline: bool) {
    if !lib.available() {
        return;
    }
    let kite = daemon(shards, inline);
    let mut producer =
        Producer::start_with(lib, kite.socket(), &["/p"], &["--freshness", "600000"]);
    let got = get(
        lib,
        &kite,
        &[
            step("plain", "/p/a/b"),
            step("prefix", "/p/a"),
            step("fresh,prefix", "/p/a"),
        ],
    );
    assert_data(&got[0], "/p/a/b", "1 /p/a/b", "the producer answers");
    assert_data(&got[1], "/p/a/b", "1 /p/a/b", "CanBePrefix from the CS");
    assert_data(
        &got[2],
        "/p/a/b",
        "1 /p/a/b",
        "CanBePrefix MustBeFresh from the CS",
    );
    let seen = producer.stop(&kite);
    assert_eq!(
        interests(&seen),
        [("/p/a/b".to_string(), false)],
        "only the exact Interest reached the producer"
    );

    let got = get(
        lib,
        &kite,
        &[
            step("prefix", "/p/a"),
            step("fresh,prefix", "/p/a"),
            "plain,lifetime=1000:/p/a".to_string(),
        ],
    );
    assert_data(&got[0], "/p/a/b", "1 /p/a/b", "CanBePrefix, producer gone");
    assert_data(&got[1], "/p/a/b", "1 /p/a/b", "MustBeFresh, producer gone");
    assert!(
        got[2]["name"].is_null(),
        "an exact /p/a is not answered by /p/a/b: {}",
        got[2]
    );
}

/// Names of one component: each below the dispatch prefix (2), so with four shards most of
/// them live in another shard than the Data under them (all eight in the same one: 4^-8).
fn short_names(tag: &str) -> Vec<String> {
    (0..8).map(|i| format!("/{tag}{i}")).collect()
}

/// CanBePrefix Interests for /sN fetch /sN/a/b/c, and exact Interests fetch /tN/a/b/c; once the
/// producer is gone, exact Interests for /sN/a/b/c and CanBePrefix Interests for /tN are all
/// answered from the CS with the Data the producer gave.
fn short_prefix_and_long_data_across_shards(lib: Lib, shards: u8, inline: bool) {
    if !lib.available() {
        return;
    }
    let kite = daemon(shards, inline);
    let s = short_names("s");
    let t = short_names("t");
    let prefixes: Vec<&str> = s.iter().chain(&t).map(String::as_str).collect();
    let mut producer = Producer::start_with(
        lib,
        kite.socket(),
        &prefixes,
        &["--prefix-suffix", "/a/b/c"],
    );
    let mut steps: Vec<String> = s.iter().map(|n| step("prefix", n)).collect();
    steps.extend(t.iter().map(|n| step("plain", &format!("{n}/a/b/c"))));
    let got = get(lib, &kite, &steps);
    let mut k = 0;
    let mut content = |asked: &str| {
        k += 1;
        format!("{k} {asked}")
    };
    let s_content: Vec<String> = s.iter().map(|n| content(n)).collect();
    let t_content: Vec<String> = t.iter().map(|n| content(&format!("{n}/a/b/c"))).collect();
    for (i, n) in s.iter().enumerate() {
        let what = format!("CanBePrefix {n} from the producer");
        assert_data(&got[i], &format!("{n}/a/b/c"), &s_content[i], &what);
    }
    for (i, n) in t.iter().enumerate() {
        let what = format!("exact {n}/a/b/c from the producer");
        assert_data(&got[8 + i], &format!("{n}/a/b/c"), &t_content[i], &what);
    }
    let seen = producer.stop(&kite);
    let mut expected: Vec<(String, bool)> = s.iter().map(|n| (n.clone(), true)).collect();
    expected.extend(t.iter().map(|n| (format!("{n}/a/b/c"), false)));
    assert_eq!(
        interests(&seen),
        expected,
        "each Interest reached the producer once"
    );

    let mut steps: Vec<String> = s
        .iter()
        .map(|n| step("plain", &format!("{n}/a/b/c")))
        .collect();
    steps.extend(t.iter().map(|n| step("prefix", n)));
    let got = get(lib, &kite, &steps);
    for (i, n) in s.iter().enumerate() {
        let what = format!("exact {n}/a/b/c from the CS (a CanBePrefix {n} fetched it)");
        assert_data(&got[i], &format!("{n}/a/b/c"), &s_content[i], &what);
    }
    for (i, n) in t.iter().enumerate() {
        let what = format!("CanBePrefix {n} from the CS (an exact Interest fetched it)");
        assert_data(&got[8 + i], &format!("{n}/a/b/c"), &t_content[i], &what);
    }
}

/// For each name (two components, then one), a CanBePrefix consumer's Interest is pending at
/// the producer (which answers once two are waiting) when another consumer sends an exact
/// Interest for the same name. The producer gets both; the CanBePrefix consumer gets the longer
/// Data it answered with, the exact consumer the Data of the name itself.
fn exact_and_prefix_interests_are_each_forwarded(lib: Lib, shards: u8, inline: bool) {
    if !lib.available() {
        return;
    }
    let kite = daemon(shards, inline);
    let mut producer = Producer::start_with(
        lib,
        kite.socket(),
        &["/x", "/w"],
        &["--prefix-suffix", "/v", "--hold", "2"],
    );
    let mut expected = Vec::new();
    for (round, name) in ["/x/y", "/w"].into_iter().enumerate() {
        let prefix_step = step("prefix", name);
        let waiting = App::spawn(lib, &["get", kite.socket(), &prefix_step]);
        assert!(
            producer.wait_interests(2 * round + 1, SEEN),
            "the CanBePrefix Interest for {name} reached the producer: {:?}",
            producer.interests()
        );
        let exact = get(lib, &kite, &[step("plain", name)]);
        let prefix = waiting.finish();
        let first = 2 * round + 1;
        assert_data(
            &prefix[0],
            &format!("{name}/v"),
            &format!("{first} {name}"),
            "the CanBePrefix consumer gets the longer Data",
        );
        assert_data(
            &exact[0],
            name,
            &format!("{} {name}", first + 1),
            "the exact consumer gets the Data of its name",
        );
        expected.push((name.to_string(), true));
        expected.push((name.to_string(), false));
    }
    let seen = producer.stop(&kite);
    assert_eq!(interests(&seen), expected, "each Interest forwarded once");
}

/// One test per library and shard setup of a case.
macro_rules! every_setup {
    ($case:ident) => {
        mod $case {
            use super::Lib;

            #[test]
            #[ignore = "needs python-ndn: scripts/test.sh runs it"]
            fn python_ndn_one_shard() {
                super::$case(Lib::PythonNdn, 1, true);
            }

            #[test]
            #[ignore = "needs python-ndn: scripts/test.sh runs it"]
            fn python_ndn_four_shards_inline() {
                super::$case(Lib::PythonNdn, 4, true);
            }

            #[test]
            #[ignore = "needs python-ndn: scripts/test.sh runs it"]
            fn python_ndn_four_shard_threads() {
                super::$case(Lib::PythonNdn, 4, false);
            }

            #[test]
            #[ignore = "needs NDNts: scripts/test.sh installs it and runs it"]
            fn ndnts_one_shard() {
                super::$case(Lib::Ndnts, 1, true);
            }

            #[test]
            #[ignore = "needs NDNts: scripts/test.sh installs it and runs it"]
            fn ndnts_four_shards_inline() {
                super::$case(Lib::Ndnts, 4, true);
            }

            #[test]
            #[ignore = "needs NDNts: scripts/test.sh installs it and runs it"]
            fn ndnts_four_shard_threads() {
                super::$case(Lib::Ndnts, 4, false);
            }
        }
    };
}

every_setup!(exact_fetch_answers_prefix_from_cs);
every_setup!(short_prefix_and_long_data_across_shards);
every_setup!(exact_and_prefix_interests_are_each_forwarded);
