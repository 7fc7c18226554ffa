//! `KTable`–`KTable` joins: Java's `KTableKTableInnerJoin`, `KTableKTableLeftJoin`,
//! `KTableKTableRightJoin`, `KTableKTableOuterJoin` and `KTableKTableJoinMerger`.

use std::any::Any;
use std::rc::Rc;

use crate::dsl::exec::Arg;
use crate::dsl::exec_table::{TableJoinExec, TableJoinSide};
use crate::dsl::serdes::AnyValue;
use crate::dsl::NodeExec;
use crate::error::Error;

use super::{failed, read_old, ser, Walk};

impl Walk<'_> {
    /// One side's update joined with the other side's current value (read from its store):
    /// an inner join needs the other value, a right join (a left join's other side) this
    /// table's value, a left or outer join forwards nothing only when the other value and
    /// both values of the update are null. The result (new, and old if the node sends old
    /// values) is forwarded with the larger of the two timestamps.
    pub(super) fn table_join(
        &mut self,
        i: usize,
        key: Arg,
        value: Arg,
        ts: i64,
    ) -> Result<(), Error> {
        let program = self.program;
        let node = &program.nodes[i];
        let name = node.name.as_str();
        let NodeExec::TableJoin(TableJoinExec {
            side,
            reversed,
            lookup,
            joiner,
        }) = &node.exec
        else {
            return Ok(());
        };
        let Some(kb) = ser(&lookup.key, key, name)? else {
            self.skip_null(name);
            return Ok(());
        };
        let found = read_old(
            self.ctx.store(&lookup.name)?,
            &kb,
            &lookup.value,
            &lookup.name,
        )?;
        let received = self.old.clone();
        let old: Option<&dyn Any> = received.as_deref().map(|v| &**v);
        let (found_value, found_ts) = match &found {
            Some((v, t)) => (Some(&**v), Some(*t)),
            None => (None, None),
        };
        if found.is_none() {
            let skip = match side {
                TableJoinSide::Inner | TableJoinSide::Right => true,
                TableJoinSide::Left | TableJoinSide::Outer => value.is_none() && old.is_none(),
            };
            if skip {
                return Ok(());
            }
        }
        let result_ts = found_ts.map_or(ts, |t| ts.max(t));
        let f = |e: String| failed(name, e);
        let join = |update: Arg| -> Result<AnyValue, Error> {
            match reversed {
                false => joiner(update, found_value).map_err(f),
                true => joiner(found_value, update).map_err(f),
            }
        };
        let sends_old = self.sends_old(i);
        let (new, old_joined) = match side {
            TableJoinSide::Inner | TableJoinSide::Left => (
                value.map(|v| join(Some(v))).transpose()?,
                match (sends_old, old) {
                    (true, Some(o)) => Some(join(Some(o))?),
                    _ => None,
                },
            ),
            TableJoinSide::Right => (
                Some(join(value)?),
                match sends_old {
                    true => Some(join(old)?),
                    false => None,
                },
            ),
            TableJoinSide::Outer => (
                match found_value.is_some() || value.is_some() {
                    true => Some(join(value)?),
                    false => None,
                },
                match sends_old && (found_value.is_some() || old.is_some()) {
                    true => Some(join(old)?),
                    false => None,
                },
            ),
        };
        self.forward_change(i, key, new.as_deref(), old_joined.map(Rc::new), result_ts)
    }

    /// `KTableKTableJoinMerger`: the join's store (if materialized) takes the new value (a
    /// null deletes); the update is forwarded as it came.
    pub(super) fn table_join_merge(
        &mut self,
        i: usize,
        key: Arg,
        value: Arg,
        ts: i64,
    ) -> Result<(), Error> {
        let program = self.program;
        let node = &program.nodes[i];
        let name = node.name.as_str();
        let NodeExec::TableJoinMerge { store } = &node.exec else {
            return Ok(());
        };
        if let Some(s) = store {
            let Some(kb) = ser(&s.key, key, name)? else {
                return Err(failed(name, "a table update with a null key"));
            };
            let vb = ser(&s.value, value, name)?;
            if self.put_cached(i, (&s.name, s.cached), kb, vb.as_deref(), ts)? {
                return Ok(());
            }
        }
        let old = self.old.clone();
        self.forward_change(i, key, value, old, ts)
    }
}
