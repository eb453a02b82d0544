//! Small functions lowered as a fast copy without operand-stack and
//! call-depth checks, handing frames near either limit to a checking copy
//! (`lower_function`), against the reference interpreter: recursions
//! driven into both limits at every depth around them. Status, abort code,
//! error location and results must be the interpreter's.

use movejit_engine::runtime::{CostTable, GasMeter, InMemoryStorage, ModuleId};
use movejit_engine::{Engine, EngineConfig};
use movejit_format::{serialize_module, AccountAddress, StatusCode};
use movejit_jit::{JitConfig, JitEngine};

const SOURCE: &str = "
module 0xcafe::split

// Recurses holding two values; the base case pushes three.
public fun hold2(n: u64): u64
    copy_loc n
    ld_u64 0
    eq
    br_false L0
    ld_u64 7
    ld_u64 8
    ld_u64 9
    add
    add
    ret
L0: copy_loc n
    copy_loc n
    copy_loc n
    ld_u64 1
    sub
    call hold2
    add
    add
    ret

// Recurses holding two values, its highest pushes after a call of a
// leaf; the base case pushes five.
public fun hold3(n: u64): u64
    copy_loc n
    ld_u64 0
    neq
    br_true L0
    ld_u64 1
    ld_u64 2
    ld_u64 3
    ld_u64 4
    ld_u64 5
    add
    add
    add
    add
    ret
L0: copy_loc n
    copy_loc n
    call leaf
    copy_loc n
    ld_u64 1
    sub
    call hold3
    add
    add
    ret

// Pushes two values.
public fun leaf(x: u64): u64
    copy_loc x
    copy_loc x
    xor
    ret

// Recurses holding nothing: the call depth runs out first.
public fun chain(n: u64): u64
    copy_loc n
    ld_u64 0
    eq
    br_false L0
    ld_u64 1
    ret
L0: copy_loc n
    ld_u64 1
    sub
    call chain
    ret
";

/// Status, abort code or sub-status, location (function, offset), results.
type Observed = (StatusCode, Option<u64>, Option<(u16, u16)>, Vec<Vec<u8>>);

struct Setup {
    interp: Engine,
    storage: InMemoryStorage,
    jit: JitEngine,
    module: u32,
}

fn setup() -> Setup {
    let m = match movejit_masm::assemble(SOURCE) {
        Ok(movejit_masm::Assembled::Module(m)) => m,
        Ok(_) => panic!("expected a module"),
        Err(e) => panic!("assemble: {e}"),
    };
    let mut storage = InMemoryStorage::default();
    storage.publish(ModuleId::new(AccountAddress::from_u64(0xcafe), "split"), serialize_module(&m));
    let mut jit = JitEngine::new(JitConfig { cost: None, ..JitConfig::default() }).expect("engine");
    let module = jit.add_module(m).expect("module added");
    Setup { interp: Engine::new(EngineConfig::aptos()), storage, jit, module }
}

impl Setup {
    fn interp(&self, f: &str, args: &[Vec<u8>]) -> Observed {
        let mut session = self.interp.new_session(&self.storage);
        let mut gas = GasMeter::new(CostTable::default(), u64::MAX / 4);
        let r =
            session.execute_function(&ModuleId::new(AccountAddress::from_u64(0xcafe), "split"), f, &[], args, &mut gas);
        match r {
            Ok(r) => (StatusCode::EXECUTED, None, None, r.returns),
            Err(e) => (e.status, e.sub_status, e.location.map(|l| (l.function_index, l.code_offset)), Vec::new()),
        }
    }

    fn jit(&mut self, f: &str, args: &[Vec<u8>]) -> Observed {
        let key = self.jit.instance_key(self.module, f, &[]).expect("instance");
        let o = self.jit.execute(&key, args, None).unwrap_or_else(|e| panic!("{f}: {e}"));
        (o.status, o.abort_code, o.location.map(|l| (l.function, l.code_offset)), o.returns)
    }
}

#[test]
fn fast_and_checking_copies_at_the_limits() {
    // (function, depths to run, statuses the interpreter must show).
    let cases: [(&str, std::ops::Range<u64>, &[StatusCode]); 3] = [
        ("hold2", 500..520, &[StatusCode::EXECUTED, StatusCode::EXECUTION_STACK_OVERFLOW]),
        ("hold3", 500..520, &[StatusCode::EXECUTED, StatusCode::EXECUTION_STACK_OVERFLOW]),
        ("chain", 1015..1035, &[StatusCode::EXECUTED, StatusCode::CALL_STACK_OVERFLOW]),
    ];
    let mut s = setup();
    let mut bad = Vec::new();
    for (f, depths, statuses) in cases {
        let mut outcomes = std::collections::BTreeSet::new();
        for n in depths.chain([0, 1, 3, 5000]) {
            let args = [n.to_le_bytes().to_vec()];
            let want = s.interp(f, &args);
            let got = s.jit(f, &args);
            outcomes.insert((want.0, want.2));
            if got != want {
                bad.push(format!("{f}({n}): jit {got:?} interp {want:?}"));
            }
        }
        for st in statuses {
            assert!(outcomes.iter().any(|o| o.0 == *st), "{f}: no {st:?} in {outcomes:?}");
        }
        // Overflows at more than one offset: the checking copy reports
        // each where the interpreter does.
        if f != "chain" {
            let places: std::collections::BTreeSet<_> =
                outcomes.iter().filter(|o| o.0 == StatusCode::EXECUTION_STACK_OVERFLOW).map(|o| o.1).collect();
            assert!(places.len() > 1, "{f}: overflows only at {places:?}");
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}
