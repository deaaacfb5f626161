//! Network namespaces joined by veth pairs, for the tests of routing across several
//! forwarders (`ip` itself and the skip without root are kite-testkit's).

use kite_testkit::netns::{add_or_skip, ip, ip_ok};

/// Network namespaces joined by veth pairs; deleted on drop.
pub struct Lab {
    /// The namespaces' names.
    pub nodes: Vec<String>,
    /// (node, device, address) of each end of each link, in link order.
    ends: Vec<[(usize, String, String); 2]>,
}

impl Lab {
    /// `names.len()` namespaces, or `None` (the test skips) without the right.
    pub fn new(tag: &str, names: &[&str]) -> Option<Lab> {
        let tag = format!("k{}{tag}", std::process::id() % 100_000);
        let mut lab = Lab {
            nodes: Vec::new(),
            ends: Vec::new(),
        };
        for n in names {
            let ns = format!("{tag}{n}");
            if !add_or_skip(&ns) {
                return None;
            }
            lab.nodes.push(ns.clone());
            ip_ok(&["-n", &ns, "link", "set", "lo", "up"]);
        }
        Some(lab)
    }

    /// A veth pair between nodes `a` and `b` on 10.201.<k>.0/24 (k: the link's number).
    pub fn link(&mut self, a: usize, b: usize) {
        let k = self.ends.len() + 1;
        let (da, db) = (format!("l{k}a"), format!("l{k}b"));
        ip_ok(&[
            "link",
            "add",
            &da,
            "netns",
            &self.nodes[a],
            "type",
            "veth",
            "peer",
            "name",
            &db,
            "netns",
            &self.nodes[b],
        ]);
        let (aa, ab) = (format!("10.201.{k}.1"), format!("10.201.{k}.2"));
        for (node, dev, addr) in [(a, &da, &aa), (b, &db, &ab)] {
            let ns = &self.nodes[node];
            ip_ok(&["-n", ns, "addr", "add", &format!("{addr}/24"), "dev", dev]);
            ip_ok(&["-n", ns, "link", "set", dev, "up"]);
        }
        self.ends.push([(a, da, aa), (b, db, ab)]);
    }

    /// Each neighbour's UDP URI, as ndn-dv's configuration lists them.
    pub fn neighbours(&self, node: usize) -> Vec<String> {
        let mut out = Vec::new();
        for [x, y] in &self.ends {
            if x.0 == node {
                out.push(format!("udp4://{}:6363", y.2));
            } else if y.0 == node {
                out.push(format!("udp4://{}:6363", x.2));
            }
        }
        out
    }

    /// The launcher that runs a program in node `i`'s namespace.
    pub fn launcher(&self, i: usize) -> Vec<String> {
        ["ip", "netns", "exec", &self.nodes[i]]
            .map(String::from)
            .to_vec()
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        for ns in &self.nodes {
            let _ = ip(&["netns", "del", ns]);
        }
    }
}
