//! A forwarding thread with virtual faces and a virtual clock: kite-testkit's harness, over this
//! crate's own types.

kite_testkit::forwarder_harness!(crate);
