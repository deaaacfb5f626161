//! The commands the threads send each other (management's handle included): not public,
//! only this crate's threads speak it.

use crossbeam_channel::Sender;
use kite_face::FaceUri;
use kite_fw::face::FaceId;
use kite_link::Persistency;
use kite_packet::{DataView, PitToken};

use crate::{CreateReply, FaceCommandError, FaceOptions, FaceStatus, ThreadCounters};

/// A `faces/create` waiting for its answer: what the face gets once made, and where the
/// answer goes.
#[derive(Debug)]
pub(crate) struct CreateRequest {
    pub persistency: Persistency,
    pub options: FaceOptions,
    pub tag: u64,
    pub reply: CreateReply,
}

impl CreateRequest {
    /// Sends the outcome, with the request's tag.
    pub fn answer(self, r: Result<FaceStatus, FaceCommandError>) {
        let _ = self.reply.send((self.tag, r));
    }
}

/// A command for the I/O thread.
#[derive(Debug)]
pub(crate) enum IoCommand {
    /// A face another I/O thread accepted (a stream connection) for this one to own: the
    /// accepting thread counted it in this thread's load already.
    Adopt(Box<kite_face::Face>),
    /// A face another I/O thread hands over because the shards its packets go to run here
    /// (see `affinity`): counted in this thread's load already, known to management.
    Migrate(Box<kite_face::Face>),
    /// A shard's output for a face that moved here, sent to its former owner before the
    /// shard learnt of the move.
    Output(kite_fw::out::Out),
    Create {
        remote: FaceUri,
        local: Option<FaceUri>,
        /// Made at once, its connection (TCP) dialed in the background and redialed while
        /// the face is permanent: for the configuration file's faces.
        background: bool,
        request: CreateRequest,
    },
    Update {
        id: FaceId,
        persistency: Option<Persistency>,
        options: FaceOptions,
        reply: Sender<Result<FaceStatus, FaceCommandError>>,
    },
    Destroy {
        id: FaceId,
        reply: Sender<Option<FaceStatus>>,
    },
    /// A face its listener (on another I/O thread) gave up for a new connection: closed by
    /// the thread that owns it, ignored by the others.
    Evict(FaceId),
    List {
        reply: Sender<Vec<FaceStatus>>,
    },
    Channels {
        reply: Sender<Vec<kite_face::ChannelStatus>>,
    },
    Shutdown,
}

/// A command for a forwarding thread.
pub(crate) enum FwCommand {
    /// A face, and the I/O thread that owns it (where its output goes).
    AddFace(FaceId, kite_fw::strategy::FaceInfo, u8),
    RemoveFace(FaceId),
    /// A Data management sends out of the internal face, with the token it echoes.
    InternalData(DataView, Option<PitToken>),
    SetCs {
        capacity: Option<usize>,
        admit: Option<bool>,
        serve: Option<bool>,
    },
    /// A configuration reload's CS settings that `cs/config` does not carry.
    SetCsPolicy {
        bytes: Option<usize>,
        unsolicited: Option<kite_fw::forwarder::UnsolicitedPolicy>,
    },
    Counters(Sender<ThreadCounters>),
    CsErase(kite_packet::Name, usize, Sender<usize>),
    Shutdown,
}
