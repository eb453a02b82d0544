//! One `.masm` module run on the reference interpreter (an engine session,
//! unit gas with a balance that never runs out) and on a standalone JIT
//! engine, for tests that compare what the two observe.

use movejit_engine::runtime::{CostTable, GasMeter, InMemoryStorage, ModuleId};
use movejit_engine::{Engine, EngineConfig};
use movejit_format::{serialize_module, StatusCode};
use movejit_jit::{JitConfig, JitEngine};

/// Status, abort code or sub-status, location (function, offset), results.
pub type Observed = (StatusCode, Option<u64>, Option<(u16, u16)>, Vec<Vec<u8>>);

pub struct Pair {
    interp: Engine,
    storage: InMemoryStorage,
    id: ModuleId,
    jit: JitEngine,
    module: u32,
}

impl Pair {
    /// `source` assembled, published for the interpreter and added to a
    /// JIT engine configured by `config`.
    pub fn new(source: &str, config: JitConfig) -> Pair {
        let m = match movejit_masm::assemble(source) {
            Ok(movejit_masm::Assembled::Module(m)) => m,
            Ok(_) => panic!("expected a module"),
            Err(e) => panic!("assemble: {e}"),
        };
        let id = ModuleId::new(*m.address(), m.name());
        let mut storage = InMemoryStorage::default();
        storage.publish(id.clone(), serialize_module(&m));
        let mut jit = JitEngine::new(config).expect("engine");
        let module = jit.add_module(m).expect("module added");
        Pair { interp: Engine::new(EngineConfig::aptos()), storage, id, jit, module }
    }

    pub fn interp(&self, f: &str, args: &[Vec<u8>]) -> Observed {
        let mut session = self.interp.new_session(&self.storage);
        let mut gas = GasMeter::new(CostTable::default(), u64::MAX / 4);
        match session.execute_function(&self.id, f, &[], args, &mut gas) {
            Ok(r) => (StatusCode::EXECUTED, None, None, r.returns),
            Err(e) => (e.status, e.sub_status, e.location.map(|l| (l.function_index, l.code_offset)), Vec::new()),
        }
    }

    pub fn jit(&mut self, f: &str, args: &[Vec<u8>]) -> Observed {
        let key = self.jit.instance_key(self.module, f, &[]).expect("instance");
        let o = self.jit.execute(&key, args, None).unwrap_or_else(|e| panic!("{f}: {e}"));
        (o.status, o.abort_code, o.location.map(|l| (l.function, l.code_offset)), o.returns)
    }
}
