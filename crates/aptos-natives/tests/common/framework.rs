//! Calling functions of the real Aptos framework (`../shared/corpus/aptos`)
//! through a small wrapper module assembled from `.masm` text, on every
//! executor of [`EXECUTORS`] (`ExecutorKind::Jit`: a call that does not
//! compile fails with `JIT_NOT_COMPILED`), unmetered and metered, and
//! checking that all of them agree.

#![allow(dead_code)]

use super::{shared, split, EXECUTORS};
use movejit_engine::runtime::natives::{with_extensions, NativeExtensions};
use movejit_engine::runtime::{
    AccountAddress, CostTable, DatatypeId, GasMeter, InMemoryStorage, ModuleId, StatusCode, Type, VmError,
};
use movejit_engine::{new_engine, EngineConfig, ExecutorKind};
use movejit_format::{decode_module, serialize_module, CompiledModule};
use movejit_masm::{assemble_with, AsmOptions, Assembled};
use std::sync::Arc;

/// Gas budget of the metered runs (enough for every call the tests make).
const BUDGET: u64 = 100_000_000;

/// The framework packages the crypto modules need.
const PACKAGES: [&str; 3] = ["MoveStdlib", "AptosStdlib", "AptosFramework"];

/// What a call ends with: BCS returns, or (status, abort code).
pub type Outcome = Result<Vec<Vec<u8>>, (StatusCode, Option<u64>)>;

pub struct Framework {
    store: InMemoryStorage,
}

impl Framework {
    /// The framework plus `wrapper` (`.masm` text, assembled against the framework).
    pub fn with_wrapper(wrapper: &str) -> Framework {
        let mut modules: Vec<(Vec<u8>, CompiledModule)> = Vec::new();
        for p in PACKAGES {
            let dir = shared().join("corpus/aptos").join(p);
            let mut paths: Vec<_> =
                std::fs::read_dir(&dir).expect("framework folder").flatten().map(|e| e.path()).collect();
            paths.sort();
            for path in paths.into_iter().filter(|p| p.extension().is_some_and(|e| e == "mv")) {
                let bytes = std::fs::read(&path).expect("module");
                let m = decode_module(&bytes).unwrap_or_else(|e| panic!("{}: {e:?}", path.display()));
                modules.push((bytes, m));
            }
        }
        let deps: Vec<CompiledModule> = modules.iter().map(|(_, m)| m.clone()).collect();
        let wrapper = match assemble_with(wrapper, AsmOptions { default_version: None, deps: &deps }) {
            Ok(Assembled::Module(m)) => m,
            Ok(Assembled::Script(_)) => panic!("wrapper is a script"),
            Err(e) => panic!("wrapper: {e}"),
        };
        let bytes = serialize_module(&wrapper);
        modules.push((bytes, wrapper));
        let mut store = InMemoryStorage::default();
        for (bytes, m) in modules {
            store.publish(ModuleId::new(*m.address(), m.name()), bytes);
        }
        Framework { store }
    }

    /// Publishes `0x1::features::Features` with the given feature flags on
    /// (what `features::is_enabled` reads).
    pub fn enable_features(&mut self, flags: &[u64]) {
        let mut bits = Vec::new();
        for &f in flags {
            let byte = (f / 8) as usize;
            if bits.len() <= byte {
                bits.resize(byte + 1, 0u8);
            }
            bits[byte] |= 1 << (f % 8);
        }
        self.publish_resource("features", "Features", bytes_arg(&bits));
    }

    /// Publishes the resource `0x1::module::name` (BCS `value`) at `0x1`.
    pub fn publish_resource(&mut self, module: &str, name: &str, value: Vec<u8>) {
        let id = DatatypeId { address: AccountAddress::from_u64(1), module: module.into(), name: name.into() };
        self.store.resources.insert((AccountAddress::from_u64(1), Type::Datatype(Arc::new(id), vec![])), value);
    }

    /// Runs `0xADDR::module::function(args)` in a fresh session on one executor.
    pub fn call(&self, executor: ExecutorKind, metered: bool, function: &str, args: &[Vec<u8>]) -> (Outcome, u64) {
        self.call_with(executor, metered, function, args, &NativeExtensions::new)
    }

    /// [`Framework::call`] with the natives' session state from `ext`.
    pub fn call_with(
        &self,
        executor: ExecutorKind,
        metered: bool,
        function: &str,
        args: &[Vec<u8>],
        ext: &dyn Fn() -> NativeExtensions,
    ) -> (Outcome, u64) {
        let config =
            EngineConfig { natives: movejit_aptos_natives::aptos_registry(), executor, ..EngineConfig::aptos() };
        let engine = new_engine(config);
        let (module, name) = split(function);
        let mut session = engine.new_session(&self.store);
        let mut gas = if metered { GasMeter::new(CostTable::default(), BUDGET) } else { GasMeter::unmetered() };
        let mut ext = ext();
        let r = with_extensions(&mut ext, || session.execute_function(&module, name, &[], args, &mut gas));
        let used = r.as_ref().map(|r| r.gas_used).unwrap_or(0);
        (r.map(|r| r.returns).map_err(|e| outcome_of_error(function, executor, e)), used)
    }

    /// Runs the call on every executor, unmetered and metered, asserts they
    /// agree (results and gas), and returns the outcome.
    pub fn call_everywhere(&self, function: &str, args: &[Vec<u8>]) -> Outcome {
        self.call_everywhere_with(function, args, &NativeExtensions::new)
    }

    /// [`Framework::call_everywhere`] with the natives' session state from `ext`.
    pub fn call_everywhere_with(
        &self,
        function: &str,
        args: &[Vec<u8>],
        ext: &dyn Fn() -> NativeExtensions,
    ) -> Outcome {
        let mut seen: Option<(Outcome, &str)> = None;
        for metered in [false, true] {
            let mut gas_seen: Option<u64> = None;
            for (label, executor) in EXECUTORS {
                let (outcome, gas) = self.call_with(executor, metered, function, args, ext);
                match &seen {
                    None => seen = Some((outcome, label)),
                    Some((first, first_label)) => {
                        assert_eq!(
                            &outcome, first,
                            "{function} on {label} (metered {metered}) differs from {first_label}"
                        )
                    }
                }
                if metered {
                    match gas_seen {
                        None => gas_seen = Some(gas),
                        Some(g) => assert_eq!(gas, g, "{function}: gas on {label}"),
                    }
                }
            }
        }
        seen.map(|(o, _)| o).expect("ran")
    }
}

fn outcome_of_error(function: &str, executor: ExecutorKind, e: VmError) -> (StatusCode, Option<u64>) {
    let message = format!("{e:?}");
    assert!(
        !message.contains(movejit_engine::JIT_NOT_COMPILED),
        "{function} was not compiled on {executor:?}: {message}"
    );
    (e.status, e.sub_status)
}

/// BCS of a `vector<u8>`.
pub fn bytes_arg(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut n = b.len();
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            break;
        }
        out.push(byte | 0x80);
    }
    out.extend_from_slice(b);
    out
}

/// BCS of a `bool`.
pub fn bool_bcs(b: bool) -> Vec<u8> {
    vec![b as u8]
}
