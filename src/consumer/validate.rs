//! KIP-320 position validation, pure: what a leader's answer about the epoch of a position
//! (an OffsetForLeaderEpoch answer, or a Fetch answer's `diverging_epoch`) means for it.
//!
//! A position carries the leader epoch of the last record consumed before it. After a
//! leader change the fetcher asks the new leader where that epoch ends on its log; an end
//! below the position means the log was truncated under the consumer (an unclean leader
//! election): the records from the end on that the fetcher returned are not in the log any
//! more. As Java's consumer (`SubscriptionState.maybeCompleteValidation`): with
//! `auto.offset.reset` earliest/latest the position moves back to the end (the first offset
//! known to diverge); with `none` the truncation is an error and the position stays until
//! the caller seeks; an epoch the leader does not know at all leaves no valid position, and
//! only then is the reset policy applied.

use super::config::OffsetReset;

/// The leader's answer about an epoch: the largest epoch not above the one asked for, and
/// where it ends (the first offset of the next epoch, or the log end).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct EpochEnd {
    /// The epoch; negative when the leader knows none (UNDEFINED_EPOCH).
    pub epoch: i32,
    /// Where it ends; negative when unknown (UNDEFINED_EPOCH_OFFSET).
    pub end_offset: i64,
}

/// What becomes of a position after validation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Validation {
    /// The position is on the leader's log: fetch on.
    Valid,
    /// Truncated, with a reset policy: fetch from `offset` (the first offset known to
    /// diverge), whose records carry `epoch`.
    SeekTo {
        /// The new position.
        offset: i64,
        /// The epoch of the records before it.
        epoch: i32,
    },
    /// No valid position exists (the leader knows no epoch at or below ours): reset by
    /// `auto.offset.reset`.
    Reset,
    /// Truncated under `auto.offset.reset=none`: an error; the position stays.
    Truncated {
        /// Where the histories diverge, if known.
        truncation_offset: Option<i64>,
    },
}

/// Validates `position` against an OffsetForLeaderEpoch answer `end` under `policy`.
pub(crate) fn validate(position: i64, end: EpochEnd, policy: OffsetReset) -> Validation {
    let reset = policy != OffsetReset::None;
    if end.epoch < 0 || end.end_offset < 0 {
        return if reset {
            Validation::Reset
        } else {
            Validation::Truncated {
                truncation_offset: None,
            }
        };
    }
    if end.end_offset < position {
        return if reset {
            Validation::SeekTo {
                offset: end.end_offset,
                epoch: end.epoch,
            }
        } else {
            Validation::Truncated {
                truncation_offset: Some(end.end_offset),
            }
        };
    }
    Validation::Valid
}

/// Validates `position` against a Fetch answer's `diverging_epoch`: as [`validate`], except
/// that an end at or above the position (the leader lacks the epoch itself but not the
/// offsets) adopts the leader's epoch there instead of fetching again with the one it just
/// refused, which would loop.
pub(crate) fn diverged(position: i64, end: EpochEnd, policy: OffsetReset) -> Validation {
    match validate(position, end, policy) {
        Validation::Valid => Validation::SeekTo {
            offset: position,
            epoch: end.epoch,
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn end(epoch: i32, end_offset: i64) -> EpochEnd {
        EpochEnd { epoch, end_offset }
    }

    #[test]
    fn an_end_at_or_past_the_position_is_valid() {
        for policy in [
            OffsetReset::Earliest,
            OffsetReset::Latest,
            OffsetReset::None,
        ] {
            assert_eq!(validate(100, end(3, 100), policy), Validation::Valid);
            assert_eq!(validate(100, end(3, 250), policy), Validation::Valid);
        }
    }

    #[test]
    fn an_end_below_the_position_is_a_truncation() {
        for policy in [OffsetReset::Earliest, OffsetReset::Latest] {
            assert_eq!(
                validate(100, end(2, 60), policy),
                Validation::SeekTo {
                    offset: 60,
                    epoch: 2
                },
                "a reset policy moves back to the divergence, not to earliest/latest"
            );
        }
        assert_eq!(
            validate(100, end(2, 60), OffsetReset::None),
            Validation::Truncated {
                truncation_offset: Some(60)
            }
        );
    }

    #[test]
    fn an_unknown_epoch_leaves_no_valid_position() {
        for e in [end(-1, -1), end(-1, 50), end(4, -1)] {
            assert_eq!(validate(100, e, OffsetReset::Earliest), Validation::Reset);
            assert_eq!(
                validate(100, e, OffsetReset::None),
                Validation::Truncated {
                    truncation_offset: None
                }
            );
        }
    }

    #[test]
    fn a_diverging_epoch_never_fetches_again_with_the_refused_epoch() {
        assert_eq!(
            diverged(100, end(2, 60), OffsetReset::Earliest),
            Validation::SeekTo {
                offset: 60,
                epoch: 2
            }
        );
        assert_eq!(
            diverged(100, end(2, 140), OffsetReset::Earliest),
            Validation::SeekTo {
                offset: 100,
                epoch: 2
            }
        );
        assert_eq!(
            diverged(100, end(2, 60), OffsetReset::None),
            Validation::Truncated {
                truncation_offset: Some(60)
            }
        );
    }
}
