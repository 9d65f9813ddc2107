//! Lock-free SPSC pipe (being written).
