//! The producer's answer to every Interest: one Data (the Interest's name, a fixed Content,
//! FreshnessPeriod 0), encoded once without its Name. Per Interest only the Data's TLV header
//! and the Name are written; the rest is shared, so the generator copies no payload in user
//! space and leaves the machine's cores to the forwarder it measures.

use bytes::Bytes;
use kite_packet::encode::put_header;
use kite_packet::{tlv_type, Data, Name};

/// A Data with everything after its Name encoded once.
pub struct Answer {
    /// MetaInfo, Content, SignatureInfo and SignatureValue, as encoded.
    tail: Bytes,
}

impl Answer {
    /// The answer carrying `payload` octets of Content.
    pub fn new(payload: usize) -> Answer {
        let mut d = Data::new(Name::root(), Bytes::from(vec![0x5A; payload]));
        d.meta.freshness_period = Some(0);
        Answer {
            tail: d.encode_after_name(),
        }
    }

    /// Writes the Data's TLV header and `name` into `head`; the Data is `head` followed by
    /// [`Answer::tail`].
    pub fn head(&self, name: &Name, head: &mut Vec<u8>) {
        put_header(head, tlv_type::DATA, name.encoded_len() + self.tail.len());
        name.encode(head);
    }

    /// What follows the Name, shared by every answer.
    pub fn tail(&self) -> &Bytes {
        &self.tail
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_and_tail_are_the_data_encoded_whole() {
        let answer = Answer::new(8000);
        let name = Name::from_uri("/bench/a/seq=7").unwrap();
        let mut whole = Data::new(name.clone(), Bytes::from(vec![0x5A; 8000]));
        whole.meta.freshness_period = Some(0);
        let mut head = Vec::new();
        answer.head(&name, &mut head);
        assert_eq!(
            [&head[..], &answer.tail()[..]].concat(),
            &whole.encode()[..]
        );
    }
}
