//! Runtime glue: the heartbeat thread and the blocking session drive the pure membership core.
