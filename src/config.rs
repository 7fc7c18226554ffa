//! Client configuration: `ClientConfig` and `SecurityProtocol`.
