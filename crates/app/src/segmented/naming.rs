//! Names of segmented objects (NDN naming conventions v3): `<prefix>/v=<version>/seg=<n>`,
//! and the RDR metadata name `<prefix>/32=metadata` ndncatchunks asks to discover a version.

use kite_packet::name::Component;
use kite_packet::{tlv_type, Name, OwnedComponent};

/// The keyword of the RDR metadata component.
pub const METADATA_KEYWORD: &[u8] = b"metadata";

/// `<versioned>/seg=<n>`.
pub fn segment_name(versioned: &Name, n: u64) -> Name {
    versioned
        .clone()
        .append(OwnedComponent::segment(n).as_ref())
}

/// `<prefix>/32=metadata`.
pub fn metadata_name(prefix: &Name) -> Name {
    prefix.clone().append(
        Component::new(tlv_type::KEYWORD_NAME_COMPONENT, METADATA_KEYWORD)
            .expect("the keyword type is a valid component type"),
    )
}

/// Whether `name` ends in a version component (so it needs no discovery).
pub fn ends_in_version(name: &Name) -> bool {
    name.last().is_some_and(|c| c.as_version().is_some())
}

/// The versioned name and segment number in the name of a Data answering a discovery
/// Interest for `asked` (a prefix, or an already versioned name): the Data must be named
/// `<asked>/v=<version>/seg=<n>`, or `<asked>/seg=<n>` when `asked` ends in a version.
pub fn parse_segment_reply(asked: &Name, data: &Name) -> Option<(Name, u64)> {
    if !asked.is_prefix_of(data) {
        return None;
    }
    let seg = data.last()?.as_segment()?;
    let versioned = data.prefix(data.len() - 1);
    let depth_ok = if ends_in_version(asked) {
        versioned.len() == asked.len()
    } else {
        versioned.len() == asked.len() + 1 && ends_in_version(&versioned)
    };
    depth_ok.then_some((versioned, seg))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(s: &str) -> Name {
        s.parse().unwrap()
    }

    #[test]
    fn segment_reply_must_be_version_then_segment_right_under_the_prefix() {
        let asked = name("/a/b");
        let d = name("/a/b/v=7/seg=3");
        assert_eq!(parse_segment_reply(&asked, &d), Some((name("/a/b/v=7"), 3)));
        // Versioned name asked: only the segment follows.
        assert_eq!(
            parse_segment_reply(&name("/a/b/v=7"), &d),
            Some((name("/a/b/v=7"), 3))
        );
        for bad in [
            "/a/b/seg=3",                 // no version
            "/a/b/v=7",                   // no segment
            "/a/b/c/v=7/seg=3",           // deeper than prefix/version/segment
            "/a/b/32=metadata/v=1/seg=0", // a cached metadata packet
            "/a/x/v=7/seg=3",             // another prefix
            "/a/b/v=7/3",                 // generic, not a segment component
        ] {
            assert_eq!(parse_segment_reply(&asked, &name(bad)), None, "{bad}");
        }
    }

    #[test]
    fn names_use_the_typed_components() {
        let s = segment_name(&name("/a/v=1"), 5);
        assert_eq!(s.last().unwrap().typ(), tlv_type::SEGMENT_NAME_COMPONENT);
        assert_eq!(s.get(1).unwrap().typ(), tlv_type::VERSION_NAME_COMPONENT);
        assert_eq!(s.get(1).unwrap().as_version(), Some(1));
        assert_eq!(metadata_name(&name("/a")), name("/a/32=metadata"));
        assert!(ends_in_version(&name("/a/v=1")));
        assert!(!ends_in_version(&name("/a/1")));
    }
}
