//! The conversion between Rust values and VM values that host functions
//! ([`NativeModule::wrap`](crate::NativeModule::wrap)) and typed calls
//! ([`TypedFunc`](crate::TypedFunc)) share: [`HostValue`] (`i32`, `i64`,
//! `f32`, `f64`, [`Ref`], [`HostRef<T>`]) and [`HostRef<T>`], a typed
//! handle to a host object.

use std::marker::PhantomData;
use std::ops::Deref;
use std::sync::Arc;

use super::ValType;
use crate::values::Value;
use crate::values::{HostObject, Ref, RefType};

mod sealed {
    pub trait Sealed {}
}

/// A Rust type that stands for one VM value in host functions
/// ([`NativeModule::wrap`](crate::NativeModule::wrap)) and typed calls ([`crate::TypedFunc`]): `i32`,
/// `i64`, `f32`, `f64`, [`Ref`] and [`HostRef<T>`]. Implemented by the
/// library only; host types travel as [`HostRef<T>`].
pub trait HostValue: Sized + Send + 'static + sealed::Sealed {
    /// The VM type.
    const TYPE: ValType;
    /// The Rust value of a VM value, or why it does not fit.
    #[doc(hidden)]
    fn from_value(v: &Value) -> Result<Self, String>;
    /// The VM value of a Rust value.
    #[doc(hidden)]
    fn into_value(self) -> Value;
}

macro_rules! scalar_host_value {
    ($t:ty, $ty:ident, $variant:ident) => {
        impl sealed::Sealed for $t {}
        impl HostValue for $t {
            const TYPE: ValType = ValType::$ty;
            fn from_value(v: &Value) -> Result<Self, String> {
                match v {
                    Value::$variant(x) => Ok(*x),
                    other => Err(format!("expected {}, got {other}", stringify!($t))),
                }
            }
            fn into_value(self) -> Value {
                Value::$variant(self)
            }
        }
    };
}
scalar_host_value!(i32, I32, I32);
scalar_host_value!(i64, I64, I64);
scalar_host_value!(f32, F32, F32);
scalar_host_value!(f64, F64, F64);

impl sealed::Sealed for Ref {}
impl HostValue for Ref {
    const TYPE: ValType = ValType::Ref;
    fn from_value(v: &Value) -> Result<Self, String> {
        match v {
            Value::Ref(r) => Ok(r.clone()),
            other => Err(format!("expected a ref, got {other}")),
        }
    }
    fn into_value(self) -> Value {
        Value::Ref(self)
    }
}

/// A counted handle to a host object holding a `T` (a ref register of a
/// host-defined type); derefs to the `T`. As an argument it also rejects
/// null and objects of other types.
pub struct HostRef<T: Send + Sync + 'static> {
    object: Arc<HostObject>,
    _type: PhantomData<T>,
}

impl<T: Send + Sync + 'static> HostRef<T> {
    /// A new object of type `type_name` (without `!`) holding `value`.
    ///
    /// # Panics
    /// When `type_name` names a built-in type (`vm.buffer`, `vm.list...`).
    pub fn new(type_name: &str, value: T) -> HostRef<T> {
        HostRef::of_type(RefType::named(type_name), value)
    }

    /// A new object of registered host type `ty` holding `value` (what
    /// [`HostRef::new`] does after looking the name up: a host module that
    /// makes many objects looks its types up once).
    ///
    /// # Panics
    /// When `ty` is built in or not registered.
    pub fn of_type(ty: RefType, value: T) -> HostRef<T> {
        HostRef {
            object: HostObject::new(ty, value),
            _type: PhantomData,
        }
    }

    /// The object `r` points at, if it is a host object holding a `T` (one
    /// count taken; null and other types are `None`).
    pub fn from_ref(r: &Ref) -> Option<HostRef<T>> {
        match r {
            Ref::Host(o) if o.downcast_ref::<T>().is_some() => Some(HostRef {
                object: o.clone(),
                _type: PhantomData,
            }),
            _ => None,
        }
    }

    /// The handle as a plain [`Ref`].
    pub fn to_ref(&self) -> Ref {
        Ref::Host(self.object.clone())
    }

    /// The handle as a plain [`Ref`], moved (no count taken or dropped).
    ///
    /// ```
    /// use irvm::HostRef;
    /// let cell = HostRef::new("doc.moved_cell", 5u32);
    /// let kept = cell.clone();
    /// let r = cell.into_ref();
    /// assert_eq!(r.downcast::<u32>(), Some(&5));
    /// drop(r);
    /// let mut kept = kept;
    /// assert!(kept.get_mut().is_some(), "the moved handle was the only other one");
    /// ```
    pub fn into_ref(self) -> Ref {
        Ref::Host(self.object)
    }

    /// The value, mutably, when this handle is the object's only one (no
    /// other handle, ref register or weak reference reaches it), as
    /// [`Arc::get_mut`]: a host module may then reuse the object for a new
    /// value instead of allocating another.
    ///
    /// ```
    /// use irvm::HostRef;
    ///
    /// let mut cell = HostRef::new("doc.cell", 1u32);
    /// *cell.get_mut().unwrap() = 2;
    /// let other = cell.clone();
    /// assert!(cell.get_mut().is_none()); // `other` could see a change
    /// drop(other);
    /// assert_eq!(cell.get_mut().copied(), Some(2));
    /// ```
    pub fn get_mut(&mut self) -> Option<&mut T> {
        // (A plain read first: a handle others share is refused without
        // the atomic operation `Arc::get_mut` makes to be sure.)
        if Arc::strong_count(&self.object) != 1 {
            return None;
        }
        Arc::get_mut(&mut self.object).and_then(|o| o.downcast_mut::<T>())
    }
}

impl<T: Send + Sync + 'static> std::fmt::Debug for HostRef<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "!{}", self.object.type_name())
    }
}

impl<T: Send + Sync + 'static> Clone for HostRef<T> {
    fn clone(&self) -> Self {
        HostRef {
            object: self.object.clone(),
            _type: PhantomData,
        }
    }
}

impl<T: Send + Sync + 'static> Deref for HostRef<T> {
    type Target = T;
    fn deref(&self) -> &T {
        // Construction checked the type (`new` or `from_value`).
        self.object
            .downcast_ref::<T>()
            .expect("HostRef holds its own type")
    }
}

impl<T: Send + Sync + 'static> sealed::Sealed for HostRef<T> {}
impl<T: Send + Sync + 'static> HostValue for HostRef<T> {
    const TYPE: ValType = ValType::Ref;
    fn from_value(v: &Value) -> Result<Self, String> {
        match v {
            Value::Ref(Ref::Host(o)) if o.downcast_ref::<T>().is_some() => Ok(HostRef {
                object: o.clone(),
                _type: PhantomData,
            }),
            Value::Ref(Ref::Null) => Err("expected a host object, got null".into()),
            Value::Ref(other) => Err(format!(
                "expected a host object of another type, got {other}"
            )),
            other => Err(format!("expected a ref, got {other}")),
        }
    }
    fn into_value(self) -> Value {
        Value::Ref(Ref::Host(self.object))
    }
}
