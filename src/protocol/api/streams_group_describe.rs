//! StreamsGroupDescribe (API key 89): request and response types (written on another branch).
