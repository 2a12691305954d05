//! The tests' kit: a scripted PMI server ([`scripted`]: PMI-1 lines and PMI-2 frames on
//! a socketpair, or in a forked process), and the core's inside as its `test-kit`
//! feature opens it ([`core`]).

pub mod scripted;

pub use pmi_core::testkit as core;
