//! Sans-IO ZMTP 3.1 (being written).
#![forbid(unsafe_code)]
