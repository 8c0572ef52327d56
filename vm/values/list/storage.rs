//! A list's elements as it stores them: a list of a primitive element type
//! (`!vm.list<i32>`, ...) keeps them at their own size, as IREE does (an
//! i32 element takes 4 bytes); variant lists (`!vm.list<?>`) and lists of
//! refs keep one [`Slot`] per element, which holds either.

use super::ElementType;
use crate::values::{Ref, TypeDef};

/// One element of a variant or ref list, and the value any element is
/// read as or written from (IREE's conversions are between slots).
#[derive(Clone, Debug, Default)]
pub(super) enum Slot {
    #[default]
    Empty,
    I8(i8),
    I16(i16),
    I32(i32),
    I64(i64),
    F32(f32),
    F64(f64),
    Ref(Ref),
}

impl Slot {
    fn value_type(&self) -> Option<ElementType> {
        Some(match self {
            Slot::I8(_) => ElementType::I8,
            Slot::I16(_) => ElementType::I16,
            Slot::I32(_) => ElementType::I32,
            Slot::I64(_) => ElementType::I64,
            Slot::F32(_) => ElementType::F32,
            Slot::F64(_) => ElementType::F64,
            _ => return None,
        })
    }

    /// IREE's value conversion between list element types: integer widths
    /// convert by sign extension or truncation, f32 and f64 convert to each
    /// other, anything else reads as zero.
    pub(super) fn convert(&self, to: ElementType) -> Slot {
        let from = match self.value_type() {
            Some(t) => t,
            None => return zero_slot(to),
        };
        if from == to {
            return self.clone();
        }
        let as_int = match *self {
            Slot::I8(v) => Some(v as i64),
            Slot::I16(v) => Some(v as i64),
            Slot::I32(v) => Some(v as i64),
            Slot::I64(v) => Some(v),
            _ => None,
        };
        match (as_int, to, self) {
            (Some(v), ElementType::I8, _) => Slot::I8(v as i8),
            (Some(v), ElementType::I16, _) => Slot::I16(v as i16),
            (Some(v), ElementType::I32, _) => Slot::I32(v as i32),
            (Some(v), ElementType::I64, _) => Slot::I64(v),
            (None, ElementType::F64, Slot::F32(f)) => Slot::F64(*f as f64),
            (None, ElementType::F32, Slot::F64(f)) => Slot::F32(*f as f32),
            _ => zero_slot(to),
        }
    }
}

/// The zero of element type `t`.
pub(super) fn zero_slot(t: ElementType) -> Slot {
    match t {
        ElementType::I8 => Slot::I8(0),
        ElementType::I16 => Slot::I16(0),
        ElementType::I32 => Slot::I32(0),
        ElementType::I64 => Slot::I64(0),
        ElementType::F32 => Slot::F32(0.0),
        ElementType::F64 => Slot::F64(0.0),
    }
}

/// [`Items::bits`] of a variant list: the bits of slot `i` when it holds
/// exactly `as_type`.
#[inline(never)]
fn slot_bits(slots: &[Slot], i: usize, as_type: ElementType) -> Option<u64> {
    match (slots.get(i)?, as_type) {
        (Slot::I32(x), ElementType::I32) => Some(*x as u32 as u64),
        (Slot::I64(x), ElementType::I64) => Some(*x as u64),
        (Slot::F32(x), ElementType::F32) => Some(x.to_bits() as u64),
        (Slot::F64(x), ElementType::F64) => Some(x.to_bits()),
        _ => None,
    }
}

/// The elements of one list, stored by its element type.
pub(super) enum Items {
    I8(Vec<i8>),
    I16(Vec<i16>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    /// A variant list's or a ref list's elements.
    Slots(Vec<Slot>),
}

/// `$body` with `$v` bound to the vector of whichever kind `$items` is.
macro_rules! each {
    ($items:expr, $v:ident => $body:expr) => {
        match $items {
            Items::I8($v) => $body,
            Items::I16($v) => $body,
            Items::I32($v) => $body,
            Items::I64($v) => $body,
            Items::F32($v) => $body,
            Items::F64($v) => $body,
            Items::Slots($v) => $body,
        }
    };
}

/// Bytes one element of a list of `element` takes: the one measure the
/// memory budget, the fuel of bulk list work and the pieces of a long
/// resize are counted in.
pub(crate) fn element_bytes(element: TypeDef) -> usize {
    match element {
        TypeDef::Value(ElementType::I8) => 1,
        TypeDef::Value(ElementType::I16) => 2,
        TypeDef::Value(ElementType::I32 | ElementType::F32) => 4,
        TypeDef::Value(ElementType::I64 | ElementType::F64) => 8,
        TypeDef::Any | TypeDef::Ref(_) => std::mem::size_of::<Slot>(),
    }
}

impl Items {
    /// No elements, stored as a list of `element` stores them.
    pub(super) fn for_element(element: TypeDef) -> Items {
        match element {
            TypeDef::Value(ElementType::I8) => Items::I8(Vec::new()),
            TypeDef::Value(ElementType::I16) => Items::I16(Vec::new()),
            TypeDef::Value(ElementType::I32) => Items::I32(Vec::new()),
            TypeDef::Value(ElementType::I64) => Items::I64(Vec::new()),
            TypeDef::Value(ElementType::F32) => Items::F32(Vec::new()),
            TypeDef::Value(ElementType::F64) => Items::F64(Vec::new()),
            TypeDef::Any | TypeDef::Ref(_) => Items::Slots(Vec::new()),
        }
    }

    /// No elements, stored as these are (what a list is left with when
    /// its elements are taken).
    pub(super) fn empty_like(&self) -> Items {
        match self {
            Items::I8(_) => Items::I8(Vec::new()),
            Items::I16(_) => Items::I16(Vec::new()),
            Items::I32(_) => Items::I32(Vec::new()),
            Items::I64(_) => Items::I64(Vec::new()),
            Items::F32(_) => Items::F32(Vec::new()),
            Items::F64(_) => Items::F64(Vec::new()),
            Items::Slots(_) => Items::Slots(Vec::new()),
        }
    }

    #[inline]
    pub(super) fn len(&self) -> usize {
        each!(self, v => v.len())
    }

    pub(super) fn capacity(&self) -> usize {
        each!(self, v => v.capacity())
    }

    /// Room for `extra` more elements (amortized: may take more).
    pub(super) fn try_reserve(&mut self, extra: usize) -> Result<(), ()> {
        each!(self, v => v.try_reserve(extra).map_err(|_| ()))
    }

    /// Room for exactly `extra` more elements.
    pub(super) fn try_reserve_exact(&mut self, extra: usize) -> Result<(), ()> {
        each!(self, v => v.try_reserve_exact(extra).map_err(|_| ()))
    }

    /// Grows to `n` elements with zeros (values) or empty slots; a list as
    /// long or longer is left alone.
    pub(super) fn grow_to(&mut self, n: usize) {
        let len = self.len();
        if n <= len {
            return;
        }
        if n == len + 1 {
            // (An element at a time, as append loops grow: a push, not
            // `resize`'s general loop.)
            match self {
                Items::I8(v) => v.push(0),
                Items::I16(v) => v.push(0),
                Items::I32(v) => v.push(0),
                Items::I64(v) => v.push(0),
                Items::F32(v) => v.push(0.0),
                Items::F64(v) => v.push(0.0),
                Items::Slots(v) => v.push(Slot::Empty),
            }
            return;
        }
        match self {
            Items::I8(v) => v.resize(n, 0),
            Items::I16(v) => v.resize(n, 0),
            Items::I32(v) => v.resize(n, 0),
            Items::I64(v) => v.resize(n, 0),
            Items::F32(v) => v.resize(n, 0.0),
            Items::F64(v) => v.resize(n, 0.0),
            Items::Slots(v) => v.resize(n, Slot::Empty),
        }
    }

    /// Element `i` as a slot (a ref retained), or `None` past the end.
    pub(super) fn get(&self, i: usize) -> Option<Slot> {
        Some(match self {
            Items::I8(v) => Slot::I8(*v.get(i)?),
            Items::I16(v) => Slot::I16(*v.get(i)?),
            Items::I32(v) => Slot::I32(*v.get(i)?),
            Items::I64(v) => Slot::I64(*v.get(i)?),
            Items::F32(v) => Slot::F32(*v.get(i)?),
            Items::F64(v) => Slot::F64(*v.get(i)?),
            Items::Slots(v) => v.get(i)?.clone(),
        })
    }

    /// Stores `value` at `i`, converted to the element type of a list of
    /// values (a variant or ref list stores the slot as it is: the caller
    /// checked it); returns the element replaced (to be released outside
    /// the lock), or `None`, with nothing changed, past the end.
    pub(super) fn store(&mut self, i: usize, value: Slot) -> Option<Slot> {
        macro_rules! typed {
            ($v:expr, $t:ident) => {{
                let dst = $v.get_mut(i)?;
                if let Slot::$t(x) = value.convert(ElementType::$t) {
                    *dst = x;
                }
                Some(Slot::Empty)
            }};
        }
        match self {
            Items::I8(v) => typed!(v, I8),
            Items::I16(v) => typed!(v, I16),
            Items::I32(v) => typed!(v, I32),
            Items::I64(v) => typed!(v, I64),
            Items::F32(v) => typed!(v, F32),
            Items::F64(v) => typed!(v, F64),
            Items::Slots(v) => Some(std::mem::replace(v.get_mut(i)?, value)),
        }
    }

    /// Appends `value` (converted as [`Items::store`] does).
    pub(super) fn push(&mut self, value: Slot) {
        macro_rules! typed {
            ($v:expr, $t:ident) => {{
                if let Slot::$t(x) = value.convert(ElementType::$t) {
                    $v.push(x);
                }
            }};
        }
        match self {
            Items::I8(v) => typed!(v, I8),
            Items::I16(v) => typed!(v, I16),
            Items::I32(v) => typed!(v, I32),
            Items::I64(v) => typed!(v, I64),
            Items::F32(v) => typed!(v, F32),
            Items::F64(v) => typed!(v, F64),
            Items::Slots(v) => v.push(value),
        }
    }

    /// The bits of element `i` when it is stored as exactly `as_type` (one
    /// of i32, i64, f32, f64); `None` otherwise. (The interpreter's hot
    /// path: inlined whole, the variant list's case out of line.)
    #[inline(always)]
    pub(super) fn bits(&self, i: usize, as_type: ElementType) -> Option<u64> {
        match self {
            Items::I32(v) if as_type == ElementType::I32 => v.get(i).map(|x| *x as u32 as u64),
            Items::F32(v) if as_type == ElementType::F32 => v.get(i).map(|x| x.to_bits() as u64),
            Items::I64(v) if as_type == ElementType::I64 => v.get(i).map(|x| *x as u64),
            Items::F64(v) if as_type == ElementType::F64 => v.get(i).map(|x| x.to_bits()),
            Items::Slots(v) => slot_bits(v, i, as_type),
            _ => None,
        }
    }

    /// Sets element `i` of a list stored as exactly `as_type` (i32, i64,
    /// f32 or f64) to `bits`; `false`, with nothing changed, otherwise.
    #[inline(always)]
    pub(super) fn set_bits(&mut self, i: usize, as_type: ElementType, bits: u64) -> bool {
        match (self, as_type) {
            (Items::I32(v), ElementType::I32) => v.get_mut(i).map(|d| *d = bits as u32 as i32),
            (Items::I64(v), ElementType::I64) => v.get_mut(i).map(|d| *d = bits as i64),
            (Items::F32(v), ElementType::F32) => {
                v.get_mut(i).map(|d| *d = f32::from_bits(bits as u32))
            }
            (Items::F64(v), ElementType::F64) => v.get_mut(i).map(|d| *d = f64::from_bits(bits)),
            _ => None,
        }
        .is_some()
    }

    /// Appends `bits` to a list stored as exactly `as_type` (i32, i64, f32
    /// or f64) when that needs no new storage (the length below the
    /// capacity); `false`, with nothing changed, otherwise.
    #[inline(always)]
    pub(super) fn push_bits_within_capacity(&mut self, as_type: ElementType, bits: u64) -> bool {
        fn push<T>(v: &mut Vec<T>, x: T) -> bool {
            if v.len() == v.capacity() {
                return false;
            }
            v.push(x);
            true
        }
        match (self, as_type) {
            (Items::I32(v), ElementType::I32) => push(v, bits as u32 as i32),
            (Items::I64(v), ElementType::I64) => push(v, bits as i64),
            (Items::F32(v), ElementType::F32) => push(v, f32::from_bits(bits as u32)),
            (Items::F64(v), ElementType::F64) => push(v, f64::from_bits(bits)),
            _ => false,
        }
    }

    /// The slots of a variant or ref list (`None` for a list of values,
    /// which holds no refs).
    pub(super) fn slots(&self) -> Option<&Vec<Slot>> {
        match self {
            Items::Slots(v) => Some(v),
            _ => None,
        }
    }

    /// The slots of a variant or ref list, to change.
    pub(super) fn slots_mut(&mut self) -> Option<&mut Vec<Slot>> {
        match self {
            Items::Slots(v) => Some(v),
            _ => None,
        }
    }

    /// Drops the elements past `keep` (a list of values; a variant or ref
    /// list's are moved out by the caller, to be released outside the
    /// lock).
    pub(super) fn truncate(&mut self, keep: usize) {
        each!(self, v => v.truncate(keep))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::values::RefType;

    #[test]
    fn values_take_their_own_size_and_refs_and_variants_a_slot() {
        let sizes = [
            (ElementType::I8, 1),
            (ElementType::I16, 2),
            (ElementType::I32, 4),
            (ElementType::F32, 4),
            (ElementType::I64, 8),
            (ElementType::F64, 8),
        ];
        for (t, bytes) in sizes {
            assert_eq!(element_bytes(TypeDef::Value(t)), bytes, "{t:?}");
            // The storage is what the measure says.
            let mut items = Items::for_element(TypeDef::Value(t));
            items.try_reserve_exact(1000).unwrap();
            items.grow_to(1000);
            let held = each!(&items, v => std::mem::size_of_val(&v[..]));
            assert_eq!(held, 1000 * bytes, "{t:?}");
        }
        let slot = std::mem::size_of::<Slot>();
        assert_eq!(element_bytes(TypeDef::Any), slot);
        assert_eq!(element_bytes(TypeDef::Ref(RefType::BUFFER)), slot);
    }

    #[test]
    fn a_store_converts_to_the_element_type_and_a_slot_keeps_what_it_is_given() {
        let mut i8s = Items::for_element(TypeDef::Value(ElementType::I8));
        i8s.grow_to(2);
        i8s.store(1, Slot::I32(0x1FF));
        assert!(matches!(i8s.get(1), Some(Slot::I8(-1))));
        assert!(i8s.store(2, Slot::I32(1)).is_none());
        let mut f64s = Items::for_element(TypeDef::Value(ElementType::F64));
        f64s.push(Slot::F32(1.5));
        f64s.push(Slot::I32(7));
        assert!(matches!(f64s.get(0), Some(Slot::F64(x)) if x == 1.5));
        assert!(matches!(f64s.get(1), Some(Slot::F64(x)) if x == 0.0));
        let mut any = Items::for_element(TypeDef::Any);
        any.push(Slot::I16(3));
        assert!(matches!(any.get(0), Some(Slot::I16(3))));
        assert_eq!(any.bits(0, ElementType::I32), None);
    }
}
