//! ferromq (being written).
