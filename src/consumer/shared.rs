//! Views into the buffer a batch was fetched (or decompressed) into: [`SharedBytes`] for a
//! key or a value and [`RecordHeaders`] for a record's headers. They are what a
//! [`FetchedRecord`](super::FetchedRecord) splits into
//! ([`FetchedRecord::into_shared`](super::FetchedRecord::into_shared)) and what the
//! processing runtime's input records hold: cloning one copies no bytes, it takes one more
//! share of the buffer. A view keeps its whole buffer alive; a caller that keeps a few of them
//! for long should copy them (`to_vec`).

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::{Deref, Range};
use std::sync::Arc;

use crate::protocol::records::Header;

/// A byte range in a shared buffer; `len == NULL` is a Kafka null.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Span {
    pub(super) start: u32,
    pub(super) len: u32,
}

pub(super) const NULL: u32 = u32::MAX;

impl Span {
    pub(super) const NONE: Span = Span {
        start: 0,
        len: NULL,
    };

    pub(super) fn get(self, data: &[u8]) -> Option<&[u8]> {
        if self.len == NULL {
            return None;
        }
        let start = self.start as usize;
        data.get(start..start + self.len as usize)
    }

    /// The bytes of this span as a share of `buf` (`None` for a null).
    pub(super) fn share(self, buf: &Arc<Vec<u8>>) -> Option<SharedBytes> {
        if self.len == NULL {
            return None;
        }
        let start = self.start as usize;
        SharedBytes::new(Arc::clone(buf), start..start + self.len as usize)
    }
}

/// The spans of one record header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct HeaderSpan {
    pub(super) key: Span,
    pub(super) value: Span,
}

/// Bytes held as a share of a reference-counted buffer (a fetched batch's bytes, or an owned
/// `Vec` moved in): a record key or value without a copy of its own. Dereferences to `[u8]`,
/// so `Option<SharedBytes>::as_deref()` is an `Option<&[u8]>`; equality, order and hash are
/// those of the bytes.
#[derive(Clone)]
pub struct SharedBytes {
    buf: Arc<Vec<u8>>,
    start: usize,
    end: usize,
}

impl SharedBytes {
    /// `range` of `buf`, or `None` when the range does not lie inside it.
    pub fn new(buf: Arc<Vec<u8>>, range: Range<usize>) -> Option<Self> {
        if range.start > range.end || range.end > buf.len() {
            return None;
        }
        Some(SharedBytes {
            buf,
            start: range.start,
            end: range.end,
        })
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        self.buf.get(self.start..self.end).unwrap_or_default()
    }

    /// Bytes of the buffer this view keeps alive (shared with the other views of it).
    pub fn retained_bytes(&self) -> usize {
        self.buf.len()
    }
}

impl Deref for SharedBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl AsRef<[u8]> for SharedBytes {
    fn as_ref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl Borrow<[u8]> for SharedBytes {
    fn borrow(&self) -> &[u8] {
        self.as_slice()
    }
}

impl Default for SharedBytes {
    fn default() -> Self {
        Vec::new().into()
    }
}

impl From<Vec<u8>> for SharedBytes {
    /// Moves `v` into a buffer of its own (no copy of the bytes).
    fn from(v: Vec<u8>) -> Self {
        let end = v.len();
        SharedBytes {
            buf: Arc::new(v),
            start: 0,
            end,
        }
    }
}

impl From<&[u8]> for SharedBytes {
    /// Copies `v` into a buffer of its own.
    fn from(v: &[u8]) -> Self {
        v.to_vec().into()
    }
}

impl<const N: usize> From<&[u8; N]> for SharedBytes {
    /// Copies `v` into a buffer of its own.
    fn from(v: &[u8; N]) -> Self {
        v.to_vec().into()
    }
}

impl fmt::Debug for SharedBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.as_slice().fmt(f)
    }
}

impl PartialEq for SharedBytes {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for SharedBytes {}

impl PartialEq<[u8]> for SharedBytes {
    fn eq(&self, other: &[u8]) -> bool {
        self.as_slice() == other
    }
}

impl PartialEq<&[u8]> for SharedBytes {
    fn eq(&self, other: &&[u8]) -> bool {
        self.as_slice() == *other
    }
}

impl PartialEq<Vec<u8>> for SharedBytes {
    fn eq(&self, other: &Vec<u8>) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl PartialOrd for SharedBytes {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for SharedBytes {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_slice().cmp(other.as_slice())
    }
}

impl Hash for SharedBytes {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state)
    }
}

/// A record's headers as a share of the buffer they were fetched into (see
/// [`SharedBytes`]); empty headers hold no buffer. Iterate with [`iter`](Self::iter) or
/// `for h in &headers`; [`to_vec`](Self::to_vec) copies them.
#[derive(Clone, Default)]
pub struct RecordHeaders {
    /// The bytes and the batch's header table, `None` when there are no headers.
    shared: Option<HeaderTable>,
    range: Range<u32>,
}

/// A batch's header spans and the bytes they point into.
#[derive(Clone)]
struct HeaderTable {
    bytes: Arc<Vec<u8>>,
    spans: Arc<Vec<HeaderSpan>>,
}

impl RecordHeaders {
    /// The headers at `range` of a batch's header `table` over `bytes`.
    pub(super) fn shared(
        bytes: Arc<Vec<u8>>,
        table: Arc<Vec<HeaderSpan>>,
        range: Range<u32>,
    ) -> Self {
        if range.is_empty() {
            return RecordHeaders::default();
        }
        RecordHeaders {
            shared: Some(HeaderTable {
                bytes,
                spans: table,
            }),
            range,
        }
    }

    /// The headers, in wire order.
    pub fn iter(&self) -> HeadersIter<'_> {
        let (bytes, spans): (&[u8], &[HeaderSpan]) = match &self.shared {
            Some(t) => {
                let range = self.range.start as usize..self.range.end as usize;
                (t.bytes.as_slice(), t.spans.get(range).unwrap_or_default())
            }
            None => (&[], &[]),
        };
        HeadersIter {
            bytes,
            spans: spans.iter(),
        }
    }

    /// The number of headers.
    pub fn len(&self) -> usize {
        self.iter().len()
    }

    /// True when there are no headers.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Owned copies of the headers: `(key, value)` pairs, a `None` value is a null header.
    pub fn to_vec(&self) -> Vec<(Vec<u8>, Option<Vec<u8>>)> {
        self.iter()
            .map(|h| (h.key.to_vec(), h.value.map(<[u8]>::to_vec)))
            .collect()
    }
}

impl From<Vec<(Vec<u8>, Option<Vec<u8>>)>> for RecordHeaders {
    /// Copies `headers` into one buffer of their own (an empty list holds none).
    fn from(headers: Vec<(Vec<u8>, Option<Vec<u8>>)>) -> Self {
        let mut bytes = Vec::new();
        let mut table = Vec::with_capacity(headers.len());
        let span = |part: Option<&[u8]>, bytes: &mut Vec<u8>| match part {
            Some(p) => match (u32::try_from(bytes.len()), u32::try_from(p.len())) {
                (Ok(start), Ok(len)) if len != NULL => {
                    bytes.extend_from_slice(p);
                    Span { start, len }
                }
                // Past 4 GiB of header bytes: the rest read as empty rather than panic.
                _ => Span { start: 0, len: 0 },
            },
            None => Span::NONE,
        };
        for (k, v) in &headers {
            let key = span(Some(k), &mut bytes);
            let value = span(v.as_deref(), &mut bytes);
            table.push(HeaderSpan { key, value });
        }
        let end = u32::try_from(table.len()).unwrap_or(u32::MAX);
        RecordHeaders::shared(Arc::new(bytes), Arc::new(table), 0..end)
    }
}

impl fmt::Debug for RecordHeaders {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.iter().map(|h| (h.key, h.value)))
            .finish()
    }
}

impl PartialEq for RecordHeaders {
    fn eq(&self, other: &Self) -> bool {
        self.iter().eq(other.iter())
    }
}

impl Eq for RecordHeaders {}

impl<'a> IntoIterator for &'a RecordHeaders {
    type Item = Header<'a>;
    type IntoIter = HeadersIter<'a>;

    fn into_iter(self) -> HeadersIter<'a> {
        self.iter()
    }
}

/// The headers of a [`RecordHeaders`], in wire order.
#[derive(Debug, Clone)]
pub struct HeadersIter<'a> {
    bytes: &'a [u8],
    spans: std::slice::Iter<'a, HeaderSpan>,
}

impl<'a> Iterator for HeadersIter<'a> {
    type Item = Header<'a>;

    fn next(&mut self) -> Option<Header<'a>> {
        let h = self.spans.next()?;
        Some(Header {
            key: h.key.get(self.bytes).unwrap_or_default(),
            value: h.value.get(self.bytes),
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.spans.size_hint()
    }
}

impl ExactSizeIterator for HeadersIter<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_bytes_are_views_and_compare_as_bytes() {
        let buf = Arc::new(b"hello world".to_vec());
        let w = SharedBytes::new(Arc::clone(&buf), 6..11).unwrap();
        assert_eq!(&*w, b"world");
        assert_eq!(w.as_ptr(), buf[6..].as_ptr(), "a view, not a copy");
        assert_eq!(w.retained_bytes(), 11);
        assert_eq!(w, SharedBytes::from(b"world"));
        assert_eq!(w, b"world".to_vec());
        assert!(SharedBytes::new(Arc::clone(&buf), 6..12).is_none());
        #[allow(clippy::reversed_empty_ranges)]
        let reversed = SharedBytes::new(Arc::clone(&buf), 7..6);
        assert!(reversed.is_none());
        assert_eq!(SharedBytes::default().len(), 0);
        let key: Option<SharedBytes> = Some(w.clone());
        assert_eq!(key.as_deref(), Some(&b"world"[..]));
    }

    #[test]
    fn owned_headers_read_back_in_order_with_nulls() {
        let list = vec![
            (b"a".to_vec(), Some(b"1".to_vec())),
            (b"n".to_vec(), None),
            (Vec::new(), Some(Vec::new())),
        ];
        let h = RecordHeaders::from(list.clone());
        assert_eq!(h.len(), 3);
        assert_eq!(h.to_vec(), list);
        let keys: Vec<&[u8]> = (&h).into_iter().map(|h| h.key).collect();
        assert_eq!(keys, [&b"a"[..], b"n", b""]);
        assert!(RecordHeaders::from(Vec::new()).is_empty());
        assert_eq!(RecordHeaders::from(Vec::new()), RecordHeaders::default());
        assert_ne!(h, RecordHeaders::default());
    }
}
