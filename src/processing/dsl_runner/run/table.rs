//! Table operations after a table's source: Java's `KTableFilter` and `KTableMapValues`.

use crate::dsl::exec::Arg;
use crate::dsl::exec_table::TableOp;
use crate::dsl::serdes::AnyValue;
use crate::dsl::NodeExec;
use crate::error::Error;

use super::{failed, ser, Walk};

impl Walk<'_> {
    /// `KTableFilter` / `KTableMapValues` without old values (no operation that asks a
    /// table for them runs yet): the new value is computed (a null stays null without
    /// calling the function; a filter turns a rejected value into null), written to the
    /// operation's store if it has one (a null deletes), and forwarded with the update's
    /// key and timestamp, null included (a tombstone downstream).
    pub(super) fn table_op(
        &mut self,
        i: usize,
        key: Arg,
        value: Arg,
        ts: i64,
    ) -> Result<(), Error> {
        let program = self.program;
        let node = &program.nodes[i];
        let name = node.name.as_str();
        let NodeExec::Table { op, store } = &node.exec else {
            return Ok(());
        };
        let f = |e: String| failed(name, e);
        let mapped: Option<AnyValue>;
        let new: Arg = match (op, value) {
            (_, None) => None,
            (TableOp::Filter(p), Some(v)) => match p(key, Some(v)).map_err(f)? {
                true => Some(v),
                false => None,
            },
            (TableOp::MapValues(m), Some(v)) => {
                mapped = Some(m(Some(v)).map_err(f)?);
                mapped.as_deref()
            }
        };
        if let Some(s) = store {
            let Some(kb) = ser(&s.key, key, name)? else {
                return Err(failed(name, "a table update with a null key"));
            };
            let vb = ser(&s.value, new, name)?;
            self.ctx.store(&s.name)?.put(&kb, vb.as_deref(), ts);
        }
        self.forward(i, key, new, ts)
    }
}
