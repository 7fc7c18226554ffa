//! Streams group membership (pure): task ids, task runtime, topology, membership state machine.
