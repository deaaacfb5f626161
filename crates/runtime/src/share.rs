//! Fair shares of the I/O thread's reads among faces whose one read can bring more packets
//! than a turn allows (UDP faces' own sockets, with receive coalescing).

/// A UDP face's share of the I/O thread's reads, counted in datagrams: deficit round robin
/// (Shreedhar and Varghese, "Efficient fair queuing using deficit round robin"), a quantum of
/// datagrams a turn (the frames a stream face's turn reads at most). A read of its own socket is sized in messages, and with
/// receive coalescing (`UDP_GRO`) one message can hold 64 datagrams, so a read of 32 messages
/// brought up to 2,048 Interests where a stream face's turn brings at most 64 frames: a flooder
/// read after its restraint ended was decoded, refused and answered 2,048 times before it was
/// restrained again. Now a read asks for as many messages as the face's credit covers at the
/// datagrams per message its last read had, and what it brought beyond its credit is a debt
/// it repays by being skipped for turns.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DatagramShare {
    /// Datagrams it may still read (negative: turns to skip first).
    deficit: isize,
    /// Datagrams per message its last read brought.
    per_message: usize,
}

impl Default for DatagramShare {
    fn default() -> Self {
        DatagramShare {
            deficit: 0,
            per_message: 1,
        }
    }
}

impl DatagramShare {
    /// Its credit for this turn: `quantum` added, no more than a quantum kept (an idle face
    /// banks nothing); `None` while it still repays a debt (the turn is counted).
    pub fn credit(&mut self, quantum: usize) -> Option<usize> {
        let q = isize::try_from(quantum).unwrap_or(isize::MAX);
        self.deficit = (self.deficit + q).min(q);
        usize::try_from(self.deficit).ok().filter(|&c| c > 0)
    }

    /// Messages to ask for with `budget` datagrams of room.
    pub fn messages(&self, budget: usize) -> usize {
        (budget / self.per_message.max(1)).clamp(1, kite_face::burst::BATCH)
    }

    /// Charges a read of `messages` messages that brought `datagrams`.
    pub fn charge(&mut self, messages: usize, datagrams: usize) {
        self.deficit = self
            .deficit
            .saturating_sub(isize::try_from(datagrams).unwrap_or(isize::MAX));
        if messages > 0 {
            self.per_message = datagrams.div_ceil(messages).max(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_coalesced_read_is_repaid_by_turns_without_reads() {
        let mut s = DatagramShare::default();
        // First read: 32 messages asked with a credit of 64, each held 64 datagrams.
        assert_eq!(s.credit(64), Some(64));
        assert_eq!(s.messages(64), 32);
        s.charge(32, 2048);
        // 2,048 read for a quantum of 64: 31 turns without a read, then a read again.
        let skipped = (0..40).take_while(|_| s.credit(64).is_none()).count();
        assert_eq!(skipped, 31);
        // Now it asks for one message: what its last read held per message.
        assert_eq!(s.messages(64), 1);
    }

    #[test]
    fn single_datagrams_are_read_a_burst_at_a_time_and_an_idle_face_banks_nothing() {
        let mut s = DatagramShare::default();
        for _ in 0..10 {
            let c = s
                .credit(64)
                .expect("a reader within its share is read every turn");
            assert_eq!(c, 64);
            assert_eq!(s.messages(c), 32, "a recvmmsg of a whole batch");
            s.charge(32, 32);
        }
        // A face that read nothing for many turns still gets one quantum.
        for _ in 0..100 {
            s.credit(64);
            s.charge(0, 0);
        }
        assert_eq!(s.credit(64), Some(64));
        // Little room: one message at least.
        assert_eq!(s.messages(1), 1);
    }
}
