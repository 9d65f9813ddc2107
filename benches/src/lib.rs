//! Shared helpers for benchmarks.
