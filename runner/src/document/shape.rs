//! A JSON text walked once without being built: what it holds is counted ([`Tally`]), so
//! that the memory its parsed forms take is known before they are built, and a key given
//! twice in one object is found.

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::collections::HashSet;

/// What a JSON text holds, counted while it is walked once without being built
/// ([`tally`]): enough to bound the memory its parsed forms take before they are built.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    /// Array elements.
    pub elements: u64,
    /// Object members.
    pub members: u64,
    /// Bytes of the strings (keys and values) that take a heap allocation each.
    pub string_bytes: u64,
    /// Strings that are not empty (one allocation each).
    pub strings: u64,
}

/// Bytes of memory one array element takes in a JSON tree: a 32-byte value, in a vector
/// grown by doubling (up to twice its length).
const ELEMENT_BYTES: u64 = 64;
/// Bytes one object member takes: a key (24) and a value (32) in a B-tree node at least
/// half full, with the node's links.
const MEMBER_BYTES: u64 = 128;
/// Bytes an allocation of a string costs beyond its text (the allocator's header and
/// rounding).
const ALLOCATION_BYTES: u64 = 24;

impl Tally {
    /// The memory the JSON tree of the text takes, at most (see the constants).
    pub fn tree_bytes(&self) -> u64 {
        self.elements
            .saturating_mul(ELEMENT_BYTES)
            .saturating_add(self.members.saturating_mul(MEMBER_BYTES))
            .saturating_add(self.string_bytes)
            .saturating_add(self.strings.saturating_mul(ALLOCATION_BYTES))
    }

    fn string(&mut self, s: &str) {
        if !s.is_empty() {
            self.strings += 1;
            self.string_bytes += s.len() as u64;
        }
    }
}

/// A JSON document walked without being built: counts what it holds ([`Tally`]) and
/// finds a key given twice in one object (the error names the key).
struct Shape<'t> {
    tally: &'t mut Tally,
}

impl<'de> DeserializeSeed<'de> for Shape<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

/// An object key, borrowed from the text where it has no escape.
struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Cow<'de, str>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Cow<'de, str>, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key {
    type Value = Cow<'de, str>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an object key")
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Borrowed(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(v.to_string()))
    }
}

impl<'de> Visitor<'de> for Shape<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, v: &str) -> Result<(), E> {
        self.tally.string(v);
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq
            .next_element_seed(Shape {
                tally: &mut *self.tally,
            })?
            .is_some()
        {
            self.tally.elements += 1;
        }
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen: HashSet<Cow<'de, str>> = HashSet::new();
        while let Some(k) = map.next_key_seed(Key)? {
            self.tally.members += 1;
            self.tally.string(&k);
            if seen.contains(&k) {
                return Err(serde::de::Error::custom(format!(
                    "the key \"{k}\" is given twice in one object"
                )));
            }
            seen.insert(k);
            map.next_value_seed(Shape {
                tally: &mut *self.tally,
            })?;
        }
        Ok(())
    }
}

/// The count of what `text` holds; a key given twice in one object is an error.
pub fn tally(text: &str) -> Result<Tally, serde_json::Error> {
    let mut t = Tally::default();
    let mut de = serde_json::Deserializer::from_str(text);
    Shape { tally: &mut t }.deserialize(&mut de)?;
    de.end()?;
    Ok(t)
}
