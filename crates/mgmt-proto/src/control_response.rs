//! ControlResponse (TLV-TYPE 101): StatusCode, StatusText, then an optional body element
//! (ControlParameters for commands). Decoding is as strict as ndn-cxx: StatusCode first,
//! StatusText second, and the next element, whatever its type, is the body (anything after it
//! is ignored, as ndn-cxx does).

use bytes::Bytes;
use kite_packet::tlv::Element;
use kite_packet::Result;

use crate::control_parameters::ControlParameters;
use crate::nfd::{self as t, status};
use crate::wire::{put_nonneg, put_str, string, Tlv};

/// A command's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControlResponse {
    /// StatusCode (HTTP-like, see [`status`]).
    pub status_code: u64,
    /// StatusText.
    pub status_text: String,
    /// The body: one whole element (usually ControlParameters).
    pub body: Option<Bytes>,
}

impl ControlResponse {
    /// A response without a body.
    pub fn new(status_code: u64, status_text: impl Into<String>) -> Self {
        ControlResponse {
            status_code,
            status_text: status_text.into(),
            body: None,
        }
    }

    /// `200 "Success"` carrying `params`, as NFD answers an accepted command.
    pub fn success(params: &ControlParameters) -> Self {
        Self::new(status::OK, "Success").with_parameters(params)
    }

    /// This response with `params` as its body.
    pub fn with_parameters(mut self, params: &ControlParameters) -> Self {
        self.body = Some(Bytes::from(params.encode()));
        self
    }

    /// The body decoded as ControlParameters, when there is one.
    pub fn parameters(&self) -> Option<Result<ControlParameters>> {
        self.body.as_ref().map(ControlParameters::decode)
    }
}

impl Tlv for ControlResponse {
    const TYPE: u64 = t::CONTROL_RESPONSE;

    fn encode_value(&self, out: &mut Vec<u8>) {
        put_nonneg(out, t::STATUS_CODE, self.status_code);
        put_str(out, t::STATUS_TEXT, &self.status_text);
        if let Some(b) = &self.body {
            out.extend_from_slice(b);
        }
    }

    fn decode_value(buf: &Bytes, el: &Element<'_>) -> Result<Self> {
        let mut r = el.children();
        let status_code = r.expect(t::STATUS_CODE)?.nonneg()?;
        let status_text = string(&r.expect(t::STATUS_TEXT)?)?;
        let body = match r.next_element() {
            Some(b) => Some(buf.slice(b?.range())),
            None => None,
        };
        Ok(ControlResponse {
            status_code,
            status_text,
            body,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kite_packet::DecodeError;

    #[test]
    fn exact_bytes_and_round_trip() {
        let r = ControlResponse::new(status::FORBIDDEN, "authorization rejected");
        let mut want = vec![101, 28, 102, 2, 0x01, 0x93, 103, 22];
        want.extend_from_slice(b"authorization rejected");
        assert_eq!(r.encode(), want);
        assert_eq!(ControlResponse::decode(&Bytes::from(want)).unwrap(), r);
    }

    #[test]
    fn body_round_trips_as_parameters() {
        let p = ControlParameters {
            name: Some("/a".parse().unwrap()),
            face_id: Some(7),
            ..Default::default()
        };
        let r = ControlResponse::success(&p);
        let back = ControlResponse::decode(&Bytes::from(r.encode())).unwrap();
        assert_eq!(
            (back.status_code, back.status_text.as_str()),
            (200, "Success")
        );
        assert_eq!(back.parameters().unwrap().unwrap(), p);
    }

    #[test]
    fn malformed_responses_are_typed_errors() {
        let no_text = Bytes::from_static(&[101, 3, 102, 1, 200]);
        assert_eq!(
            ControlResponse::decode(&no_text),
            Err(DecodeError::Missing { typ: 103 })
        );
        let text_first = Bytes::from_static(&[101, 5, 103, 0, 102, 1, 200]);
        assert!(matches!(
            ControlResponse::decode(&text_first),
            Err(DecodeError::UnexpectedType { .. })
        ));
        let two_bodies = Bytes::from_static(&[101, 9, 102, 1, 200, 103, 0, 104, 0, 105, 0]);
        let r = ControlResponse::decode(&two_bodies).unwrap();
        assert_eq!(r.body.as_deref(), Some(&[104, 0][..]));
    }
}
