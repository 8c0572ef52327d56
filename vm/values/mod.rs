//! The VM's values: a [`Value`] (an i32, i64, f32, f64 or reference) and
//! the reference-counted objects a reference points at: byte buffers,
//! lists, and objects of types that host modules register. A [`Ref`] is a
//! counted handle (or null); cloning retains, dropping releases, and
//! "move" operands transfer the handle without touching the count.
//!
//! This module has the handle, the reference types ([`RefType`],
//! [`TypeDef`]) and host objects; the rest are children: `value`
//! ([`Value`], which holds a `Ref`, and which a list's elements are read
//! and written as, so the two live together), `buffer` (`!vm.buffer`,
//! with its thread lease) and `list` (`!vm.list`, with its element lock
//! and the cycle collector).

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use crate::trap::{StatusCode, Trap};

pub(crate) mod buffer;
pub(crate) mod list;
mod value;

pub use buffer::{Buffer, BufferPool, NativeRegionLease, RawBytes, RegionLease, BUFFER_ALIGNMENT};
pub use list::{ElementType, List};
pub use value::Value;

/// Identity of a reference type. Built-in types have fixed ids; host types
/// get theirs from a process-wide registry by name ([`RefType::named`]),
/// so an id means the same type in every [`TypeRegistry`](crate::TypeRegistry).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RefType(pub u32);

/// Names of the host-registered types, indexed by `id - FIRST_HOST`. A
/// name is leaked once, when its type is registered (types are never
/// unregistered, and a program registers a handful), so that every object
/// can name its type without a count or a copy.
static HOST_TYPES: std::sync::RwLock<Vec<&'static str>> = std::sync::RwLock::new(Vec::new());

/// The same names for [`RefType::host_name`], read without a lock (every
/// host object made asks for its type's name): written once each, under
/// `HOST_TYPES`'s write lock, in segments that double in size (segment
/// `k` holds ids `64 * (2^k - 1)` onwards), so that none moves.
static HOST_TYPE_NAMES: [std::sync::OnceLock<Box<[std::sync::OnceLock<&'static str>]>>;
    NAME_SEGMENTS] = [const { std::sync::OnceLock::new() }; NAME_SEGMENTS];
const NAME_SEGMENTS: usize = 24;
const FIRST_SEGMENT: usize = 64;

/// Segment and place in it of host type number `i` (0 for the first).
fn name_slot(i: usize) -> (usize, usize) {
    let segment = (i / FIRST_SEGMENT + 1).ilog2() as usize;
    (segment, i - FIRST_SEGMENT * ((1 << segment) - 1))
}

impl RefType {
    /// `!vm.buffer`.
    pub const BUFFER: RefType = RefType(1);
    /// `!vm.list<...>`.
    pub const LIST: RefType = RefType(2);
    /// First id handed out to host-registered types.
    pub const FIRST_HOST: u32 = 16;

    /// The host type named `name` (without `!`, e.g. `env.counter`),
    /// registering it on first use.
    pub fn named(name: &str) -> RefType {
        if let Some(t) = RefType::lookup(name) {
            return t;
        }
        let mut types = HOST_TYPES.write().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = types.iter().position(|t| *t == name) {
            return RefType(RefType::FIRST_HOST + i as u32);
        }
        let leaked: &'static str = Box::leak(name.to_owned().into_boxed_str());
        let (segment, at) = name_slot(types.len());
        if let Some(names) = HOST_TYPE_NAMES.get(segment) {
            let names = names.get_or_init(|| {
                (0..FIRST_SEGMENT << segment)
                    .map(|_| std::sync::OnceLock::new())
                    .collect()
            });
            let _ = names[at].set(leaked);
        }
        types.push(leaked);
        RefType(RefType::FIRST_HOST + types.len() as u32 - 1)
    }

    /// The type named `name` (without `!`), if built in or registered.
    pub fn lookup(name: &str) -> Option<RefType> {
        match name {
            "vm.buffer" => return Some(RefType::BUFFER),
            n if n.starts_with("vm.list") => return Some(RefType::LIST),
            _ => {}
        }
        let types = HOST_TYPES.read().unwrap_or_else(|e| e.into_inner());
        types
            .iter()
            .position(|t| *t == name)
            .map(|i| RefType(RefType::FIRST_HOST + i as u32))
    }

    /// The registered name of a host type (`None` for built-in and
    /// unregistered ids).
    pub fn host_name(self) -> Option<&'static str> {
        let i = self.0.checked_sub(RefType::FIRST_HOST)? as usize;
        let (segment, at) = name_slot(i);
        HOST_TYPE_NAMES.get(segment)?.get()?.get(at)?.get().copied()
    }

    /// The type's name (without `!`).
    pub fn name(self) -> String {
        match self {
            RefType::BUFFER => "vm.buffer".into(),
            RefType::LIST => "vm.list".into(),
            RefType(id) => self
                .host_name()
                .map_or_else(|| format!("type#{id}"), str::to_owned),
        }
    }
}

/// What an entry of a module's type table denotes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TypeDef {
    /// A primitive type.
    Value(ElementType),
    /// A reference type.
    Ref(RefType),
    /// Any type (`!vm.opaque`, `?`): variant storage, no type checks.
    Any,
}

impl TypeDef {
    /// Whether `r` may be stored where this type is expected (null always
    /// may).
    #[inline]
    pub fn admits(self, r: &Ref) -> bool {
        match (self, r.ref_type()) {
            (_, None) | (TypeDef::Any, _) => true,
            (TypeDef::Ref(t), Some(u)) => t == u,
            _ => false,
        }
    }

    /// Checks that `r` may be stored where this type is expected (IREE's
    /// "retain or move checked": null always passes).
    #[inline]
    pub fn check_ref(self, r: &Ref) -> Result<(), Trap> {
        if self.admits(r) {
            Ok(())
        } else {
            Err(Trap::new(
                StatusCode::InvalidArgument,
                "source ref type mismatch",
            ))
        }
    }
}

/// A host object behind a reference of a host-registered type: its type
/// and the value, in one allocation with the reference count (a
/// `HostObject<T>` made by [`HostObject::new`] is used as the unsized
/// `HostObject`, whose value is `dyn Any`).
pub struct HostObject<V: ?Sized = dyn Any + Send + Sync> {
    ty: RefType,
    type_name: &'static str,
    value: V,
}

impl HostObject {
    /// A counted object of registered host type `ty` holding `value`.
    /// Objects are shared by every holder of a ref, on any thread, hence
    /// `Send + Sync` (use atomics or a `Mutex` for state that changes).
    ///
    /// # Panics
    /// When `ty` is a built-in type (`!vm.buffer`, `!vm.list`) or was not
    /// registered ([`RefType::named`]): a host object must not pass type
    /// checks as one of those.
    pub fn new<T: Any + Send + Sync>(ty: RefType, value: T) -> Arc<HostObject> {
        let Some(type_name) = ty.host_name() else {
            panic!(
                "a host object needs a registered host type, not `{}`",
                ty.name()
            )
        };
        Arc::new(HostObject {
            ty,
            type_name,
            value,
        })
    }
    /// The object's type.
    pub fn ref_type(&self) -> RefType {
        self.ty
    }
    /// The registered name of the object's type.
    pub fn type_name(&self) -> &str {
        self.type_name
    }
    /// The wrapped value, if it is a `T`.
    pub fn downcast_ref<T: 'static>(&self) -> Option<&T> {
        self.value.downcast_ref()
    }
    /// The wrapped value, mutably, if it is a `T` (through
    /// `Arc::get_mut`: only for an object no one else holds).
    pub fn downcast_mut<T: 'static>(&mut self) -> Option<&mut T> {
        self.value.downcast_mut()
    }
}

impl Ref {
    /// A new object of host type `type_name` (without `!`) holding `value`.
    ///
    /// # Panics
    /// When `type_name` names a built-in type (`vm.buffer`, `vm.list...`).
    pub fn host<T: Send + Sync + 'static>(type_name: &str, value: T) -> Ref {
        Ref::Host(HostObject::new(RefType::named(type_name), value))
    }

    /// The host object's value, if this is a host object holding a `T`.
    pub fn downcast<T: 'static>(&self) -> Option<&T> {
        match self {
            Ref::Host(h) => h.downcast_ref(),
            _ => None,
        }
    }
}

/// A counted reference to a VM object, or null.
#[derive(Clone, Default)]
pub enum Ref {
    /// The null reference.
    #[default]
    Null,
    /// A `!vm.buffer`.
    Buffer(Arc<Buffer>),
    /// A `!vm.list`.
    List(Arc<List>),
    /// An object of a host-registered type.
    Host(Arc<HostObject>),
}

impl Ref {
    /// Takes the reference, leaving null, copying its fields one by one
    /// (see [`Value::take_into`] on why not the whole value at once).
    #[inline]
    pub(crate) fn take_fieldwise(&mut self) -> Ref {
        // SAFETY: each handle is read out once and the place overwritten
        // with null without dropping it, so the count read out is the
        // place's own: moved, neither copied nor lost.
        unsafe {
            let taken = match self {
                Ref::Null => Ref::Null,
                Ref::Buffer(a) => Ref::Buffer(std::ptr::read(a)),
                Ref::List(a) => Ref::List(std::ptr::read(a)),
                Ref::Host(a) => Ref::Host(std::ptr::read(a)),
            };
            std::ptr::write(self, Ref::Null);
            taken
        }
    }

    /// `*self = src.clone()`, the clone written field by field into place
    /// (see [`Value::take_into`] on why not the whole value at once).
    #[inline]
    pub(crate) fn assign_clone_of(&mut self, src: &Ref) {
        drop(std::mem::take(self));
        let copied = match src {
            Ref::Null => Ref::Null,
            Ref::Buffer(a) => Ref::Buffer(Arc::clone(a)),
            Ref::List(a) => Ref::List(Arc::clone(a)),
            Ref::Host(a) => Ref::Host(Arc::clone(a)),
        };
        // SAFETY: `self` holds null (taken above), which owns nothing, so
        // overwriting it without a drop loses nothing.
        unsafe { std::ptr::write(self, copied) };
    }

    /// `refs[to] = refs[from].clone()` (or `std::mem::take(&mut
    /// refs[from])` when `take`), copied field by field into place (see
    /// [`Value::take_into`] on why not the whole value at once).
    #[inline]
    pub(crate) fn copy_within(refs: &mut [Ref], from: usize, to: usize, take: bool) {
        if from == to {
            // (A ref moved or copied onto itself stays.)
            return;
        }
        drop(std::mem::take(&mut refs[to]));
        let src = &mut refs[from];
        // SAFETY: a taken handle is read out once and its place
        // overwritten with null without dropping it (moved, not copied);
        // a kept one is cloned, which counts. `refs[to]` holds null, which
        // owns nothing, when it is overwritten without a drop.
        unsafe {
            let copied = match src {
                Ref::Null => Ref::Null,
                Ref::Buffer(a) if take => Ref::Buffer(std::ptr::read(a)),
                Ref::Buffer(a) => Ref::Buffer(Arc::clone(a)),
                Ref::List(a) if take => Ref::List(std::ptr::read(a)),
                Ref::List(a) => Ref::List(Arc::clone(a)),
                Ref::Host(a) if take => Ref::Host(std::ptr::read(a)),
                Ref::Host(a) => Ref::Host(Arc::clone(a)),
            };
            if take {
                std::ptr::write(src, Ref::Null);
            }
            std::ptr::write(&mut refs[to], copied);
        }
    }

    /// Whether this is the null reference.
    #[inline]
    pub fn is_null(&self) -> bool {
        matches!(self, Ref::Null)
    }

    /// The object's type, or `None` for null.
    #[inline]
    pub fn ref_type(&self) -> Option<RefType> {
        match self {
            Ref::Null => None,
            Ref::Buffer(_) => Some(RefType::BUFFER),
            Ref::List(_) => Some(RefType::LIST),
            Ref::Host(h) => Some(h.ty),
        }
    }

    /// Whether both refer to the same object (or both are null).
    pub fn ptr_eq(&self, other: &Ref) -> bool {
        match (self, other) {
            (Ref::Null, Ref::Null) => true,
            (Ref::Buffer(a), Ref::Buffer(b)) => Arc::ptr_eq(a, b),
            (Ref::List(a), Ref::List(b)) => Arc::ptr_eq(a, b),
            (Ref::Host(a), Ref::Host(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }

    /// The buffer, or an error naming `what` when null or not a buffer.
    #[inline(always)]
    pub fn buffer(&self, what: &'static str) -> Result<&Arc<Buffer>, Trap> {
        match self {
            Ref::Buffer(b) => Ok(b),
            other => Err(other.not_a_buffer(what)),
        }
    }

    #[cold]
    #[inline(never)]
    fn not_a_buffer(&self, what: &'static str) -> Trap {
        let problem = if self.is_null() {
            "is null"
        } else {
            "is not a !vm.buffer"
        };
        Trap::new(StatusCode::InvalidArgument, format!("{what} {problem}"))
    }

    /// The list this is, if it is one (the interpreter's fast path; the
    /// errors come from [`Ref::list`]).
    #[inline]
    pub(crate) fn list_fast(&self) -> Option<&List> {
        match self {
            Ref::List(l) => Some(l),
            _ => None,
        }
    }

    /// The list this holds, if it is one, as its holder (for the paths
    /// that skip the element lock when this is the list's only holder:
    /// `List::set_bits_held`, `List::resize_charged_held`).
    #[inline]
    pub(crate) fn list_holder(&mut self) -> Option<&mut Arc<List>> {
        match self {
            Ref::List(l) => Some(l),
            _ => None,
        }
    }

    /// The list, or an error when null or not a list.
    #[inline]
    pub fn list(&self) -> Result<&Arc<List>, Trap> {
        match self {
            Ref::List(l) => Ok(l),
            Ref::Null => Err(Trap::new(StatusCode::InvalidArgument, "list is null")),
            _ => Err(Trap::new(
                StatusCode::InvalidArgument,
                "list is not a !vm.list",
            )),
        }
    }

    /// Number of strong handles to the object (0 for null).
    pub fn ref_count(&self) -> usize {
        match self {
            Ref::Null => 0,
            Ref::Buffer(b) => Arc::strong_count(b),
            Ref::List(l) => Arc::strong_count(l),
            Ref::Host(h) => Arc::strong_count(h),
        }
    }
}

impl From<Buffer> for Ref {
    /// A new counted handle to `buffer`.
    fn from(buffer: Buffer) -> Ref {
        Ref::Buffer(Arc::new(buffer))
    }
}

impl From<List> for Ref {
    /// A new counted handle to `list`.
    fn from(list: List) -> Ref {
        Ref::List(Arc::new(list))
    }
}

impl fmt::Display for Ref {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ref::Null => f.write_str("(null)"),
            Ref::Buffer(b) => write!(f, "!vm.buffer[{}]", b.len()),
            Ref::List(l) => write!(f, "!vm.list[{}]", l.len()),
            Ref::Host(h) => write!(f, "!{}", h.type_name),
        }
    }
}

impl fmt::Debug for Ref {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod fieldwise_tests;

#[cfg(test)]
mod tests {
    use super::*;

    fn count(r: &Ref) -> usize {
        match r {
            Ref::Buffer(b) => Arc::strong_count(b),
            Ref::List(l) => Arc::strong_count(l),
            Ref::Host(h) => Arc::strong_count(h),
            Ref::Null => 0,
        }
    }

    #[test]
    fn refs_copied_field_by_field_keep_their_counts_right() {
        let buf = Ref::from(Buffer::from_vec(vec![1u8, 2]));
        let host = Ref::host("fieldwise_test.cell", 7u32);
        let list = Ref::List(Arc::new(
            List::new(TypeDef::Ref(RefType::BUFFER), 1).expect("list"),
        ));
        for r in [buf, host, list] {
            // Copied (counted), moved (not), onto itself (unchanged), over
            // a live ref (the old one released).
            let other = Ref::from(Buffer::from_vec(vec![9u8]));
            let mut refs = vec![r.clone(), Ref::Null, other.clone()];
            assert_eq!(count(&r), 2);
            Ref::copy_within(&mut refs, 0, 1, false);
            assert_eq!(count(&r), 3);
            assert!(refs[0].ptr_eq(&r) && refs[1].ptr_eq(&r));
            Ref::copy_within(&mut refs, 1, 1, true);
            assert!(refs[1].ptr_eq(&r), "moved onto itself, it stays");
            Ref::copy_within(&mut refs, 1, 2, true);
            assert!(refs[1].is_null() && refs[2].ptr_eq(&r));
            assert_eq!(count(&r), 3, "a move takes no count");
            assert_eq!(count(&other), 1, "the ref it replaced was released");
            refs[1].assign_clone_of(&r);
            assert_eq!(count(&r), 4);
            refs[1].assign_clone_of(&Ref::Null);
            assert_eq!(count(&r), 3);
            let mut taken = refs[2].take_fieldwise();
            assert!(refs[2].is_null() && taken.ptr_eq(&r));
            assert_eq!(count(&r), 3);
            // Into a value vector and out again.
            let mut v = Value::Ref(std::mem::take(&mut taken));
            let mut out = Vec::new();
            v.take_into(&mut out);
            assert!(matches!(v, Value::None));
            assert!(matches!(&out[0], Value::Ref(x) if x.ptr_eq(&r)));
            assert_eq!(count(&r), 3);
            drop(out);
            drop(refs);
            assert_eq!(count(&r), 1);
        }
    }

    #[test]
    fn plain_values_taken_into_a_vector_keep_their_bits() {
        let mut out = Vec::with_capacity(1);
        for mut v in [
            Value::I32(-5),
            Value::I64(i64::MIN),
            Value::F32(f32::from_bits(0x7fc0_0001)),
            Value::F64(-0.0),
            Value::None,
        ] {
            fn bits(v: &Value) -> (char, u64) {
                let b = match v {
                    Value::I32(x) => *x as u32 as u64,
                    Value::I64(x) => *x as u64,
                    Value::F32(x) => u64::from(x.to_bits()),
                    Value::F64(x) => x.to_bits(),
                    _ => 0,
                };
                (v.kind_char(), b)
            }
            let before = bits(&v);
            v.take_into(&mut out);
            assert!(matches!(v, Value::None));
            assert_eq!(bits(out.last().expect("pushed")), before);
        }
        assert_eq!(out.len(), 5, "grew past its first capacity");
    }

    #[test]
    fn host_type_names_are_placed_in_segments_that_double() {
        assert_eq!(name_slot(0), (0, 0));
        assert_eq!(name_slot(63), (0, 63));
        assert_eq!(name_slot(64), (1, 0));
        assert_eq!(name_slot(191), (1, 127));
        assert_eq!(name_slot(192), (2, 0));
        assert_eq!(name_slot(447), (2, 255));
        assert_eq!(name_slot(448), (3, 0));
    }

    #[test]
    fn every_registered_type_names_itself_past_the_first_segment() {
        let types: Vec<(RefType, String)> = (0..300)
            .map(|i| {
                let name = format!("segment_test.type{i}");
                (RefType::named(&name), name)
            })
            .collect();
        for (t, name) in &types {
            assert_eq!(t.host_name(), Some(name.as_str()));
            assert_eq!(RefType::lookup(name), Some(*t));
            assert_eq!(RefType::named(name), *t, "registered once");
        }
        assert_eq!(RefType::BUFFER.host_name(), None);
        assert_eq!(RefType(u32::MAX).host_name(), None);
    }

    #[test]
    fn host_types_registered_from_many_threads_at_once_name_themselves() {
        // Enough types across the threads to fill past the first two name
        // segments (64 and 192 ids), whatever the other tests registered.
        let (threads, each) = if cfg!(miri) { (4, 60) } else { (8, 100) };
        std::thread::scope(|s| {
            let mut workers = Vec::new();
            for t in 0..threads {
                workers.push(s.spawn(move || {
                    (0..each)
                        .map(|i| {
                            let name = format!("many_threads_test.t{t}.n{i}");
                            let ty = RefType::named(&name);
                            // Named as soon as the id is handed out.
                            assert_eq!(ty.host_name(), Some(name.as_str()));
                            (ty, name)
                        })
                        .collect::<Vec<_>>()
                }));
            }
            // A reader asks for names while the writers register: an id it
            // finds named is that name's id.
            s.spawn(|| {
                for round in 0..if cfg!(miri) { 2 } else { 50 } {
                    for id in RefType::FIRST_HOST..RefType::FIRST_HOST + 1200 {
                        if let Some(name) = RefType(id).host_name() {
                            assert_eq!(RefType::lookup(name), Some(RefType(id)), "round {round}");
                        }
                    }
                }
            });
            let mut all: Vec<(RefType, String)> = workers
                .into_iter()
                .flat_map(|w| w.join().unwrap())
                .collect();
            for (ty, name) in &all {
                assert_eq!(ty.host_name(), Some(name.as_str()));
                assert_eq!(RefType::named(name), *ty, "registered once");
            }
            all.sort_by_key(|(ty, _)| ty.0);
            all.dedup_by_key(|(ty, _)| ty.0);
            assert_eq!(all.len(), threads * each, "an id handed out twice");
            assert!(all.last().unwrap().0 .0 - RefType::FIRST_HOST >= 192);
        });
    }
}
