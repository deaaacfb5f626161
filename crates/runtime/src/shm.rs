//! The I/O thread's shared-memory faces ([`kite_shm`]): their applications write their
//! eventfd only when the thread announced that it sleeps, so while it is awake it looks at
//! each of their rings once per turn (one atomic load each), and before it sleeps it
//! announces so in each region.

use hashbrown::HashMap;
use kite_face::Face;
use kite_fw::face::FaceId;

/// The shared-memory faces, by id (a closed face is forgotten at the next poll).
#[derive(Debug, Default)]
pub(crate) struct ShmFaces {
    ids: Vec<FaceId>,
}

impl ShmFaces {
    /// Follows a face that switched to shared memory.
    pub fn add(&mut self, id: FaceId) {
        self.ids.push(id);
    }

    /// Puts in `ready` the faces with data in their ring or output waiting for room.
    pub fn ready(&mut self, faces: &HashMap<FaceId, Face>, ready: &mut Vec<FaceId>) {
        self.ids.retain(|id| match faces.get(id) {
            Some(f) => {
                if f.polled_input() || f.pending_output() > 0 {
                    ready.push(*id);
                }
                true
            }
            None => false,
        });
    }

    /// Before the thread sleeps: asks every application to wake it; `true` when data came
    /// meanwhile (do not sleep).
    pub fn announce_sleep(&self, faces: &HashMap<FaceId, Face>) -> bool {
        let mut any = false;
        for id in &self.ids {
            any |= faces.get(id).is_some_and(Face::announce_sleep);
        }
        any
    }
}
