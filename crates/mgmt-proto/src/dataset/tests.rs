use super::*;
use kite_packet::ContentType;

fn n(s: &str) -> Name {
    s.parse().unwrap()
}

#[test]
fn dataset_requests_are_recognized() {
    let gen = |s: &str| parse_dataset_request(&n(s));
    assert_eq!(
        gen("/localhost/nfd/faces/list"),
        Some(DatasetRequest::Generate(Dataset::FacesList))
    );
    assert_eq!(
        gen("/localhost/nfd/status/general"),
        Some(DatasetRequest::Generate(Dataset::StatusGeneral))
    );
    assert_eq!(
        gen("/localhost/nfd/rib/list"),
        Some(DatasetRequest::Generate(Dataset::RibList))
    );
    // Segment and version Interests go to the storage only.
    assert_eq!(gen("/localhost/nfd/faces/list/v=5/seg=1"), None);
    assert_eq!(gen("/localhost/nfd/faces/list/v=5"), None);
    assert_eq!(gen("/localhost/nfd/rib/register"), None);
    assert_eq!(gen("/localhop/nfd/rib/list"), None);
}

#[test]
fn signed_queries_with_a_params_digest_are_served() {
    let name = n("/localhost/nfd/fib/list").append(
        kite_packet::Component::new(tlv_type::PARAMETERS_SHA256_DIGEST_COMPONENT, &[7; 32])
            .unwrap(),
    );
    assert_eq!(
        parse_dataset_request(&name),
        Some(DatasetRequest::Generate(Dataset::FibList))
    );
    let segs = segments(&name, 1, b"x");
    let d = Data::decode(segs[0].clone()).unwrap();
    assert!(name.is_prefix_of(&d.name));
}

#[test]
fn face_query_filter_or_400() {
    let f = FaceQueryFilter {
        face_id: Some(300),
        ..Default::default()
    };
    let ok = n("/localhost/nfd/faces/query").append_generic(&f.encode());
    assert_eq!(
        parse_dataset_request(&ok),
        Some(DatasetRequest::Generate(Dataset::FacesQuery(f)))
    );
    let bad = n("/localhost/nfd/faces/query").append_generic(&[150, 3, 105, 1]);
    let want = ControlResponse::new(400, "Malformed filter");
    assert_eq!(
        parse_dataset_request(&bad),
        Some(DatasetRequest::Reject(want.clone()))
    );
    assert_eq!(
        parse_dataset_request(&n("/localhost/nfd/faces/query")),
        Some(DatasetRequest::Reject(want.clone()))
    );
    let d = Data::decode(nack_data(&bad, &want)).unwrap();
    assert_eq!(d.meta.content_type, Some(ContentType::NACK));
    assert_eq!(
        ControlResponse::decode(d.content.as_ref().unwrap()).unwrap(),
        want
    );
}

#[test]
fn segmentation_as_nfd_does_it() {
    let payload: Vec<u8> = (0..20_000u32).map(|i| i as u8).collect();
    let name = n("/localhost/nfd/faces/list");
    let segs = segments(&name, 1_795_345_271_538, &payload);
    assert_eq!(segs.len(), 3);
    let mut joined = Vec::new();
    for (i, wire) in segs.iter().enumerate() {
        let d = Data::decode(wire.clone()).unwrap();
        assert_eq!(
            d.name.to_uri(),
            format!("/localhost/nfd/faces/list/v=1795345271538/seg={i}")
        );
        assert_eq!(d.meta.freshness_period, Some(1000));
        assert_eq!(
            d.sig_info.sig_type,
            kite_packet::SignatureType::DIGEST_SHA256
        );
        let want_final = (i == 2).then(|| OwnedComponent::segment(2));
        assert_eq!(d.meta.final_block_id, want_final);
        let c = d.content.unwrap();
        assert!(c.len() <= MAX_SEGMENT_PAYLOAD);
        joined.extend_from_slice(&c);
    }
    assert_eq!(joined, payload);
    assert_eq!(
        Data::decode(segs[0].clone())
            .unwrap()
            .content
            .unwrap()
            .len(),
        8000
    );
}

#[test]
fn an_empty_dataset_is_one_final_segment() {
    let segs = segments(&n("/localhost/nfd/fib/list"), 9, &[]);
    assert_eq!(segs.len(), 1);
    let d = Data::decode(segs[0].clone()).unwrap();
    assert_eq!(d.meta.final_block_id, Some(OwnedComponent::segment(0)));
    assert_eq!(d.content.unwrap().len(), 0);
}

#[test]
fn control_response_data_is_named_like_the_interest() {
    let name = n("/localhost/nfd/rib/register/x");
    let d = Data::decode(response_data(&name, &ControlResponse::new(200, "Success"))).unwrap();
    assert_eq!(d.name, name);
    assert_eq!(d.meta.freshness_period, Some(1000));
    assert_eq!(d.meta.content_type, None);
}

#[test]
fn notifications_count_from_zero() {
    let mut s = NotificationStream::face_events();
    let a = Data::decode(s.post(b"one")).unwrap();
    let b = Data::decode(s.post(b"two")).unwrap();
    assert_eq!(a.name.to_uri(), "/localhost/nfd/faces/events/seq=0");
    assert_eq!(b.name.to_uri(), "/localhost/nfd/faces/events/seq=1");
    assert_eq!(b.content.unwrap().as_ref(), b"two");
    assert_eq!(a.meta.freshness_period, Some(1000));
    assert_eq!(s.next_seq(), 2);
}

#[test]
fn a_name_with_no_room_for_version_and_segment_gets_no_segments() {
    let longest = kite_packet::name::MAX_NAME_VALUE_LEN;
    let named = |len: usize| {
        let prefix = n("/localhost/nfd/faces/list");
        let filler = vec![b'x'; len - prefix.value().len() - 4];
        prefix.append_generic(&filler)
    };
    let fits = named(longest - 20);
    assert_eq!(fits.value().len(), longest - 20);
    assert_eq!(segments(&fits, u64::MAX, b"payload").len(), 1);
    assert!(segments(&named(longest - 19), u64::MAX, b"payload").is_empty());
    assert!(segments(&named(longest), 1, b"payload").is_empty());
}
