//! One module per Kafka API: request and response types that both encode and decode.
