//! One module per Kafka API: request and response types that both encode and decode.
//!
//! Conventions shared by every module: fields are the schema's, in snake_case; nullable fields
//! are `Option`; fields absent from a version are skipped on encode and left at their default on
//! decode. An absent field holding a non-default value is silently dropped if the schema marks
//! it ignorable and is an [`EncodeError::FieldNotInVersion`](crate::protocol::codec::EncodeError)
//! otherwise, as in Kafka's generated code. Unknown tagged fields are skipped on decode.

/// Defines a typed view of a raw integer code: an enum with one variant per known code plus
/// `Unknown(raw)` (a newer broker's code is kept, not refused), with `from_code`, `code`,
/// `name` (Kafka's constant name), `From` both ways and `Display`.
macro_rules! code_enum {
    (
        $(#[$meta:meta])*
        $name:ident($raw:ty) {
            $($(#[$vmeta:meta])* $variant:ident = $code:literal => $kafka:literal,)*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)*
            /// Any other code, kept as received.
            Unknown($raw),
        }

        impl $name {
            /// Maps a wire code to its typed value (unknown codes are preserved).
            pub const fn from_code(code: $raw) -> Self {
                match code {
                    $($code => Self::$variant,)*
                    other => Self::Unknown(other),
                }
            }

            /// The wire code.
            pub const fn code(self) -> $raw {
                match self {
                    $(Self::$variant => $code,)*
                    Self::Unknown(c) => c,
                }
            }

            /// Kafka's name for the code (`"UNKNOWN"` for unknown codes).
            pub const fn name(self) -> &'static str {
                match self {
                    $(Self::$variant => $kafka,)*
                    Self::Unknown(_) => "UNKNOWN",
                }
            }
        }

        impl From<$raw> for $name {
            fn from(code: $raw) -> Self {
                Self::from_code(code)
            }
        }

        impl From<$name> for $raw {
            fn from(code: $name) -> Self {
                code.code()
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}({})", self.name(), self.code())
            }
        }
    };
}

pub mod add_offsets_to_txn;
pub mod add_partitions_to_txn;
pub mod api_versions;
pub mod create_topics;
pub mod delete_records;
pub mod end_txn;
pub mod fetch;
pub mod find_coordinator;
pub mod init_producer_id;
pub mod list_offsets;
pub mod metadata;
pub mod offset_commit;
pub mod offset_fetch;
pub mod offset_for_leader_epoch;
pub mod produce;
pub mod sasl_authenticate;
pub mod sasl_handshake;
pub mod streams_group_describe;
pub mod streams_group_heartbeat;
pub mod txn_offset_commit;

#[cfg(test)]
mod test_util;
#[cfg(test)]
mod txn_differential;
