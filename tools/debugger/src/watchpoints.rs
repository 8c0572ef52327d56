//! Watchpoints: stops when a register of one frame changes (gdb's `watch
//! %i3`, DAP's data breakpoints). They are software watchpoints, as gdb's
//! are without hardware help: while one is set the program runs under the
//! observer, which reads the register before each instruction the watched
//! frame executes. A register belongs to one invocation of a function, so
//! a watchpoint ends when its frame returns: the program stops there and
//! the watchpoint is deleted, as gdb does when a local's block is left.
//! Read watchpoints (gdb's `rwatch`) and access watchpoints (`awatch`)
//! also stop after an instruction of the frame that reads the register,
//! as the instruction table's operand roles say
//! ([`crate::info::register_uses`]); an access watchpoint also stops after
//! an instruction of the frame writes the register, by the same table,
//! whether the value changed or not (gdb's `awatch` sees every store;
//! `Value = ` then, as gdb words a store of the same value).

/// What a watchpoint stops for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum WatchKind {
    /// A change of the value (gdb's `watch`).
    #[default]
    Write,
    /// A read (gdb's `rwatch`).
    Read,
    /// A read or a change (gdb's `awatch`).
    Access,
}

use super::{DebugValue, Expr, RegisterFile, RegisterRef};

/// A watchpoint ([`crate::Debugger::add_watchpoint`]).
#[derive(Clone, Debug)]
pub struct Watchpoint {
    /// Number shown to the user (shared with breakpoints' numbers).
    pub id: u32,
    /// The register watched.
    pub register: RegisterRef,
    /// What it stops for.
    pub kind: WatchKind,
    /// The depth of its frame (1 = the entry function's).
    pub depth: usize,
    /// Its frame's module.
    pub module: String,
    /// Its frame's module's place in the context
    /// ([`irvm::FrameInfo::module_index`]).
    pub module_index: usize,
    /// Its frame's function (internal ordinal).
    pub function: u32,
    /// The function's name, for messages.
    pub function_name: String,
    /// Disabled watchpoints never stop.
    pub enabled: bool,
    /// Stops only where this holds after the change (`watch %i3 if %i3 >
    /// 10`), evaluated in the watched frame.
    pub condition: Option<Expr>,
    /// How often the value changed with the condition holding.
    pub hits: u32,
    /// The value when the program last stopped or the watchpoint was set.
    pub value: DebugValue,
}

/// A watchpoint that stopped the program: its register changed.
#[derive(Clone, Debug)]
pub struct WatchHit {
    /// Its number.
    pub id: u32,
    /// The register.
    pub register: RegisterRef,
    /// The value before.
    pub old: DebugValue,
    /// The value now.
    pub new: DebugValue,
}

/// A read or access watchpoint that stopped the program: an instruction
/// of its frame read the register.
#[derive(Clone, Debug)]
pub struct WatchRead {
    /// Its number.
    pub id: u32,
    /// The register.
    pub register: RegisterRef,
    /// The value the instruction read.
    pub value: DebugValue,
    /// The watchpoint's kind (read or access).
    pub kind: WatchKind,
}

/// A watchpoint as the observer checks it.
pub(crate) struct ActiveWatch {
    pub id: u32,
    pub register: RegisterRef,
    pub kind: WatchKind,
    /// The value an instruction of the frame read, reported before the
    /// next instruction (in whatever frame: a call reads its arguments).
    pub pending_read: Option<DebugValue>,
    /// Whether the condition held in the frame when that read was made
    /// (the read of a `vm.return` of the outermost frame is reported when
    /// the program ends, with no frame to evaluate it in then).
    pub pending_read_holds: bool,
    /// An instruction of the frame wrote the register (an access
    /// watchpoint): reported before the frame's next instruction (a
    /// call's results are written when its callee returns).
    pub pending_write: bool,
    pub depth: usize,
    pub condition: Option<Expr>,
    pub value: DebugValue,
    /// A disabled watchpoint is checked only for its frame returning (it
    /// ends with it too: else a later invocation at the same depth would
    /// be taken for its frame once it is enabled again).
    pub enabled: bool,
}

/// What a watchpoint saw before an instruction ([`crate::Stop::Watchpoints`]).
#[derive(Clone, Debug)]
pub enum WatchEvent {
    /// Its register changed (and the condition holds).
    Changed(WatchHit),
    /// The instruction before read its register (a read or access
    /// watchpoint; and the condition holds).
    Read(WatchRead),
    /// Its frame returned: the watchpoint (this number) is deleted.
    LeftScope(u32),
}

impl ActiveWatch {
    /// Looks at the frame at `depth` (the top one), whose registers are
    /// `regs`, before an instruction that reads the registers `reads`
    /// says it reads and writes those `writes` says; `None` when nothing
    /// happened to this watchpoint.
    pub fn check(
        &mut self,
        depth: usize,
        regs: &RegisterFile<'_>,
        reads: &dyn Fn(RegisterRef) -> bool,
        writes: &dyn Fn(RegisterRef) -> bool,
    ) -> Option<WatchEvent> {
        let pending = self.pending_read.take();
        let wrote = std::mem::take(&mut self.pending_write);
        if depth > self.depth && wrote {
            // A call of the frame writes its results when it returns.
            self.pending_write = true;
        }
        if depth != self.depth {
            // The read before is reported first: a call's callee runs (its
            // first instruction, where the watched frame's condition cannot
            // be evaluated: that stops, as a condition that fails to
            // evaluate does), or the frame returned, which is reported at
            // the next instruction.
            if let Some(value) = pending {
                return Some(self.read_event(value));
            }
            if depth < self.depth {
                return Some(WatchEvent::LeftScope(self.id));
            }
            // A callee runs: the watched frame's registers cannot change
            // until it returns.
            return None;
        }
        if !self.enabled {
            return None;
        }
        self.note_read(depth, regs, reads);
        self.note_write(depth, writes);
        let now = regs.read(self.register).ok()?;
        if self.kind == WatchKind::Read || same_value(&now, &self.value) {
            // No change (or one a read watchpoint does not stop for): a
            // read before is reported, or an access watchpoint's write of
            // the same value (as the value now), where the condition
            // holds.
            self.value = now.clone();
            let value = pending.or_else(|| wrote.then_some(now))?;
            if let Some(c) = &self.condition {
                if !c.holds(regs).unwrap_or(true) {
                    return None;
                }
            }
            return Some(self.read_event(value));
        }
        let old = std::mem::replace(&mut self.value, now.clone());
        if let Some(c) = &self.condition {
            // A condition that cannot be evaluated stops, as a
            // breakpoint's does.
            if !c.holds(regs).unwrap_or(true) {
                return None;
            }
        }
        Some(WatchEvent::Changed(WatchHit {
            id: self.id,
            register: self.register,
            old,
            new: now,
        }))
    }
}

impl ActiveWatch {
    fn read_event(&self, value: DebugValue) -> WatchEvent {
        WatchEvent::Read(WatchRead {
            id: self.id,
            register: self.register,
            value,
            kind: self.kind,
        })
    }

    /// Before an instruction of the frame at `depth` that reads the
    /// registers `reads` says: a read or access watchpoint of that frame
    /// whose register it reads keeps the value, to report it before the
    /// next instruction.
    pub fn note_read(
        &mut self,
        depth: usize,
        regs: &RegisterFile<'_>,
        reads: &dyn Fn(RegisterRef) -> bool,
    ) {
        if self.kind == WatchKind::Write || !self.enabled || depth != self.depth {
            return;
        }
        if reads(self.register) {
            self.pending_read = regs.read(self.register).ok();
            self.pending_read_holds = self
                .condition
                .as_ref()
                .is_none_or(|c| c.holds(regs).unwrap_or(true));
        }
    }

    /// The read still to report when the program ends (its frame's last
    /// instruction, a `vm.return`, read the register and no instruction
    /// followed), where the condition held.
    pub fn unreported_read(&self) -> Option<WatchEvent> {
        let value = self.pending_read.clone()?;
        (self.enabled && self.pending_read_holds).then(|| self.read_event(value))
    }

    /// Before an instruction of the frame at `depth` that writes the
    /// registers `writes` says: an access watchpoint of that frame whose
    /// register it writes reports the write before the frame's next
    /// instruction, changed or not.
    pub fn note_write(&mut self, depth: usize, writes: &dyn Fn(RegisterRef) -> bool) {
        if self.kind != WatchKind::Access || !self.enabled || depth != self.depth {
            return;
        }
        if writes(self.register) {
            self.pending_write = true;
        }
    }
}

/// Whether registers `a` and `b` share a slot (`%i4` is half of
/// `%i4:5`).
pub(crate) fn overlap(a: RegisterRef, b: RegisterRef) -> bool {
    let slots = |r: RegisterRef| match r {
        RegisterRef::I32(k) => Some((u32::from(k), 1)),
        RegisterRef::Pair(k) => Some((u32::from(k), 2)),
        RegisterRef::Ref(_) => None,
    };
    match (a, b) {
        (RegisterRef::Ref(x), RegisterRef::Ref(y)) => x == y,
        _ => match (slots(a), slots(b)) {
            (Some((x, n)), Some((y, m))) => x < y + m && y < x + n,
            _ => false,
        },
    }
}

/// Whether a register holds the same value as before: the same bits, or
/// the same object for refs.
pub(crate) fn same_value(a: &DebugValue, b: &DebugValue) -> bool {
    match (a, b) {
        (DebugValue::I32(x), DebugValue::I32(y)) => x == y,
        (DebugValue::I64(x), DebugValue::I64(y)) => x == y,
        (DebugValue::Integer(x), DebugValue::Integer(y)) => x == y,
        (DebugValue::F32(x), DebugValue::F32(y)) => x.to_bits() == y.to_bits(),
        (DebugValue::F64(x), DebugValue::F64(y)) => x.to_bits() == y.to_bits(),
        (DebugValue::Ref(x), DebugValue::Ref(y)) => x.ptr_eq(y),
        (DebugValue::Text(x), DebugValue::Text(y)) => x == y,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    impl ActiveWatch {
        /// [`ActiveWatch::check`] before an instruction that reads nothing.
        fn check_without_reads(
            &mut self,
            depth: usize,
            regs: &RegisterFile<'_>,
        ) -> Option<WatchEvent> {
            self.check(depth, regs, &|_| false, &|_| false)
        }
    }

    #[test]
    fn a_read_watchpoint_reports_the_read_before_the_next_instruction() {
        let banks = BTreeMap::new();
        let mut w = watch(RegisterRef::I32(1), 2, DebugValue::I32(5));
        w.kind = WatchKind::Read;
        let regs = |i32s: &'static [u32]| RegisterFile {
            i32s,
            refs: &[],
            banks: &banks,
        };
        let reads_pair = |r: RegisterRef| overlap(r, RegisterRef::Pair(0));
        // An instruction reading %i0:1 reads %i1: reported before the next
        // one, in whatever frame it is (a call's callee).
        assert!(w
            .check(2, &regs(&[0, 5]), &reads_pair, &|_| false)
            .is_none());
        match w.check(3, &regs(&[9, 9]), &|_| false, &|_| false) {
            Some(WatchEvent::Read(read)) => assert!(matches!(read.value, DebugValue::I32(5))),
            other => panic!("no read reported: {other:?}"),
        }
        // A change alone is no read.
        assert!(w.check(2, &regs(&[0, 6]), &|_| false, &|_| false).is_none());
        assert!(w.check(2, &regs(&[0, 7]), &|_| false, &|_| false).is_none());
        // An access watchpoint sees both.
        w.kind = WatchKind::Access;
        assert!(matches!(
            w.check(2, &regs(&[0, 8]), &|_| false, &|_| false),
            Some(WatchEvent::Changed(_))
        ));
        assert!(w
            .check(2, &regs(&[0, 8]), &|r| r == RegisterRef::I32(1), &|_| false)
            .is_none());
        assert!(matches!(
            w.check(2, &regs(&[0, 8]), &|_| false, &|_| false),
            Some(WatchEvent::Read(_))
        ));
    }

    /// An access watchpoint reports a write of the same value (`Value =
    /// `, as gdb's `awatch` reports a store that changes nothing), also a
    /// call's result written when its callee returns; a write watchpoint
    /// does not.
    #[test]
    fn an_access_watchpoint_sees_a_write_of_the_same_value() {
        let banks = BTreeMap::new();
        let regs = |i32s: &'static [u32]| RegisterFile {
            i32s,
            refs: &[],
            banks: &banks,
        };
        let writes_i1 = |r: RegisterRef| overlap(r, RegisterRef::I32(1));
        for kind in [WatchKind::Access, WatchKind::Write] {
            let mut w = watch(RegisterRef::I32(1), 2, DebugValue::I32(5));
            w.kind = kind;
            assert!(w.check(2, &regs(&[0, 5]), &|_| false, &writes_i1).is_none());
            let seen = w.check(2, &regs(&[0, 5]), &|_| false, &|_| false);
            match kind {
                WatchKind::Access => match seen {
                    Some(WatchEvent::Read(read)) => {
                        assert!(matches!(read.value, DebugValue::I32(5)))
                    }
                    other => panic!("no write reported: {other:?}"),
                },
                _ => assert!(seen.is_none(), "{seen:?}"),
            }
            // A call writing %i1: its callee runs first, the write is seen
            // back in the frame.
            assert!(w.check(2, &regs(&[0, 5]), &|_| false, &writes_i1).is_none());
            assert!(w.check(3, &regs(&[1, 1]), &|_| false, &|_| false).is_none());
            let seen = w.check(2, &regs(&[0, 5]), &|_| false, &|_| false);
            assert_eq!(seen.is_some(), kind == WatchKind::Access, "{seen:?}");
        }
    }

    #[test]
    fn registers_overlap_by_slots() {
        assert!(overlap(RegisterRef::I32(5), RegisterRef::Pair(4)));
        assert!(overlap(RegisterRef::Pair(4), RegisterRef::Pair(4)));
        assert!(!overlap(RegisterRef::I32(6), RegisterRef::Pair(4)));
        assert!(!overlap(RegisterRef::I32(1), RegisterRef::Ref(1)));
        assert!(overlap(RegisterRef::Ref(1), RegisterRef::Ref(1)));
    }

    fn watch(register: RegisterRef, depth: usize, value: DebugValue) -> ActiveWatch {
        ActiveWatch {
            id: 7,
            register,
            kind: WatchKind::Write,
            pending_read: None,
            pending_read_holds: false,
            pending_write: false,
            depth,
            condition: None,
            value,
            enabled: true,
        }
    }

    #[test]
    fn a_watchpoint_stops_when_its_frame_changes_the_register_and_ends_with_the_frame() {
        let banks = BTreeMap::new();
        let mut w = watch(RegisterRef::I32(1), 2, DebugValue::I32(5));
        let regs = |i32s: &'static [u32]| RegisterFile {
            i32s,
            refs: &[],
            banks: &banks,
        };
        assert!(w.check_without_reads(2, &regs(&[0, 5])).is_none());
        // A callee's registers are another frame's.
        assert!(w.check_without_reads(3, &regs(&[9, 9])).is_none());
        match w.check_without_reads(2, &regs(&[0, 6])) {
            Some(WatchEvent::Changed(hit)) => {
                assert_eq!(hit.id, 7);
                assert!(matches!(hit.old, DebugValue::I32(5)));
                assert!(matches!(hit.new, DebugValue::I32(6)));
            }
            _ => panic!("the change was not seen"),
        }
        assert!(w.check_without_reads(2, &regs(&[0, 6])).is_none());
        assert!(matches!(
            w.check_without_reads(1, &regs(&[0, 6])),
            Some(WatchEvent::LeftScope(7))
        ));
    }

    #[test]
    fn a_condition_filters_changes_but_the_value_is_followed() {
        let banks = BTreeMap::new();
        let mut w = watch(RegisterRef::I32(0), 1, DebugValue::I32(0));
        w.condition = Some(Expr::parse("%i0 > 2").unwrap());
        let regs = |i32s: &'static [u32]| RegisterFile {
            i32s,
            refs: &[],
            banks: &banks,
        };
        assert!(w.check_without_reads(1, &regs(&[1])).is_none());
        assert!(w.check_without_reads(1, &regs(&[2])).is_none());
        match w.check_without_reads(1, &regs(&[3])) {
            Some(WatchEvent::Changed(hit)) => assert!(matches!(hit.old, DebugValue::I32(2))),
            _ => panic!("the change to 3 was not seen"),
        }
    }

    #[test]
    fn a_disabled_watchpoint_sees_no_change_but_ends_with_its_frame() {
        let banks = BTreeMap::new();
        let mut w = watch(RegisterRef::I32(0), 2, DebugValue::I32(0));
        w.enabled = false;
        let regs = |i32s: &'static [u32]| RegisterFile {
            i32s,
            refs: &[],
            banks: &banks,
        };
        assert!(w.check_without_reads(2, &regs(&[5])).is_none());
        assert!(matches!(
            w.check_without_reads(1, &regs(&[5])),
            Some(WatchEvent::LeftScope(7))
        ));
    }

    #[test]
    fn floats_compare_by_bits() {
        assert!(!same_value(&DebugValue::F32(0.0), &DebugValue::F32(-0.0)));
        assert!(same_value(
            &DebugValue::F64(f64::NAN),
            &DebugValue::F64(f64::NAN)
        ));
    }
}
