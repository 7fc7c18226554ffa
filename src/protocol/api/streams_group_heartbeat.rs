//! StreamsGroupHeartbeat (API key 88): request and response types (written on another branch).
