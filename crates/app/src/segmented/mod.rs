//! Segmented objects: fetching them with a congestion-controlled pipeline ([`fetch()`]) and
//! publishing them as signed, versioned segments ([`Published`]).

pub mod cc;
pub mod fetch;
pub mod loss;
pub mod naming;
pub mod publish;
pub mod rto;

pub use cc::{CcKind, CcOptions, Window};
pub use fetch::{fetch, Discovery, FetchError, FetchOptions, FetchStats, RdrFailure};
pub use publish::{PublishOptions, Published};
pub use rto::RttEstimator;

#[cfg(test)]
mod tests;
