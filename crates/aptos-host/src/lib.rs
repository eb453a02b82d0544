//! movejit-aptos-host: what an Aptos node does around Move execution, over
//! one movejit [`Engine`], enough to run a stream of real transactions:
//!
//! - one storage (modules and resources) that each successful
//!   transaction's change set is applied to;
//! - the Aptos natives' host state carried from one transaction to the
//!   next (table contents, events, aggregators: [`NativeExtensions`]), and
//!   rolled back with a failed transaction ([`run_transaction`]);
//! - a transaction context per transaction (hash, block timestamp, sender);
//! - a code-publishing request carried out after its transaction, as the
//!   Aptos adapter does (a bundle that fails to publish fails the
//!   transaction), and modules' `init_module` run after a package is
//!   published at genesis.
//!
//! Not modelled (a node's work outside the Move VM): the prologue and
//! epilogue (signatures, sequence numbers, fees), transaction-level gas and
//! storage fees, block metadata. Each transaction is one session over the
//! engine, so the engine's module and code caches serve the whole stream.

#![forbid(unsafe_code)]

use movejit_aptos_natives::{run_transaction, take_publish_request, TransactionContext, UserTransaction};
pub use movejit_engine::FunctionRef;
use movejit_engine::{
    AccountAddress, ChangeSet, Engine, GasMeter, InMemoryStorage, ModuleId, StatusCode, Type, VmError,
};
use movejit_format::CompiledModule;
use movejit_runtime::natives::{with_extensions, NativeExtensions};

/// The chain id transactions carry (Aptos's test chain).
pub const CHAIN_ID: u8 = 4;

/// A stream of transactions over one engine and one storage.
pub struct Host {
    engine: Engine,
    storage: InMemoryStorage,
    ext: NativeExtensions,
    /// Transactions run so far (numbers the next one's hash and timestamp).
    transactions: u64,
    sender: AccountAddress,
}

impl Host {
    /// A host over `storage` (e.g. the framework and packages published at
    /// genesis); transactions are sent by `sender`.
    pub fn new(engine: Engine, storage: InMemoryStorage, sender: AccountAddress) -> Host {
        Host { engine, storage, ext: NativeExtensions::new(), transactions: 0, sender }
    }

    /// The same chain state (storage, natives' host state, transaction
    /// count) served by another engine: e.g. a cold one after a genesis
    /// run elsewhere.
    pub fn with_engine(self, engine: Engine) -> Host {
        Host { engine, ..self }
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }
    pub fn storage(&self) -> &InMemoryStorage {
        &self.storage
    }
    /// The natives' host state (tables, events, ...).
    pub fn extensions(&self) -> &NativeExtensions {
        &self.ext
    }
    /// The natives' host state, to change between transactions (e.g. the
    /// randomness a block provides).
    pub fn extensions_mut(&mut self) -> &mut NativeExtensions {
        &mut self.ext
    }

    /// Runs `init_module` of every module of `modules` that has one, each
    /// as a transaction signed by its module's address, in an order where
    /// a module comes after the modules of `modules` it depends on.
    pub fn init_modules(&mut self, modules: &[CompiledModule]) -> Result<(), VmError> {
        let id = |m: &CompiledModule| ModuleId::new(*m.address(), m.name());
        let ours: Vec<ModuleId> = modules.iter().map(id).collect();
        let mut done: Vec<ModuleId> = Vec::new();
        while done.len() < modules.len() {
            let before = done.len();
            for m in modules {
                let me = id(m);
                let ready = m.immediate_dependencies().iter().all(|(a, n)| {
                    let d = ModuleId::new(*a, n);
                    !ours.contains(&d) || done.contains(&d)
                });
                if done.contains(&me) || !ready {
                    continue;
                }
                if has_function(m, "init_module") {
                    let f = FunctionRef { module: me.clone(), name: "init_module".to_string() };
                    self.execute(&f, &[], &[signer_arg(*m.address())], &mut GasMeter::unmetered())?;
                }
                done.push(me);
            }
            if done.len() == before {
                return Err(VmError::new(StatusCode::CYCLIC_MODULE_DEPENDENCY));
            }
        }
        Ok(())
    }

    /// One transaction: a session of its own calling `f`; on success its
    /// change set (and any package it asked to publish) is applied, on
    /// failure nothing is. Returns the call's BCS return values.
    ///
    /// Not yet: when the call succeeds but the package it asked to publish
    /// fails to, the natives' host state it changed (tables, events) stays
    /// (Aptos discards it with the transaction); its change set is dropped.
    pub fn execute(
        &mut self,
        f: &FunctionRef,
        ty_args: &[Type],
        args: &[Vec<u8>],
        gas: &mut GasMeter,
    ) -> Result<Vec<Vec<u8>>, VmError> {
        self.transactions += 1;
        let n = self.transactions;
        let mut hash = [0u8; 32];
        hash[..8].copy_from_slice(&n.to_le_bytes());
        let user = UserTransaction {
            sender: self.sender,
            secondary_signers: vec![],
            gas_payer: self.sender,
            max_gas_amount: 2_000_000,
            gas_unit_price: 100,
            chain_id: CHAIN_ID,
            timestamp_us: 1_000_000 * n,
            transaction_index: n as u32,
            entry_function_payload: None,
            multisig_payload: None,
            is_encrypted: false,
        };
        self.ext.insert(TransactionContext::new(hash, CHAIN_ID, Some(user)));
        let (engine, storage) = (&self.engine, &self.storage);
        let outcome = run_transaction(&mut self.ext, || {
            let mut session = engine.new_session(storage);
            let r = session.execute_function(&f.module, &f.name, ty_args, args, gas)?;
            Ok((r.returns, session.finish()?))
        });
        let (returns, changes) = outcome?;
        let published = self.publish_requested()?;
        self.commit(&changes, published);
        Ok(returns)
    }

    /// A read-only call outside any transaction: its BCS returns.
    pub fn view(&mut self, f: &FunctionRef, ty_args: &[Type], args: &[Vec<u8>]) -> Result<Vec<Vec<u8>>, VmError> {
        let (engine, storage) = (&self.engine, &self.storage);
        with_extensions(&mut self.ext, || {
            let mut session = engine.new_session(storage);
            let r = session.execute_function(&f.module, &f.name, ty_args, args, &mut GasMeter::unmetered())?;
            Ok(r.returns)
        })
    }

    /// Carries out the publish request the last transaction made, if any.
    fn publish_requested(&mut self) -> Result<Vec<(ModuleId, Vec<u8>)>, VmError> {
        let Some(req) = take_publish_request(&mut self.ext) else { return Ok(vec![]) };
        let mut session = self.engine.new_session(&self.storage);
        let modules = session.publish_bundle(&req.bundle, req.destination)?;
        let names: std::collections::BTreeSet<String> = modules.iter().map(|(id, _)| id.name.to_string()).collect();
        if names != req.expected_modules {
            return Err(VmError::new(StatusCode::CONSTRAINT_NOT_SATISFIED));
        }
        Ok(modules)
    }

    fn commit(&mut self, changes: &ChangeSet, modules: Vec<(ModuleId, Vec<u8>)>) {
        self.storage.apply(changes);
        for (id, bytes) in modules {
            self.storage.publish(id, bytes);
        }
    }
}

/// BCS of `address`'s own signer (variant 0, then the address).
pub fn signer_arg(address: AccountAddress) -> Vec<u8> {
    [&[0u8][..], &address.0].concat()
}

fn has_function(m: &CompiledModule, name: &str) -> bool {
    m.function_defs.iter().any(|f| {
        m.function_handles
            .get(f.function.idx())
            .and_then(|h| m.identifiers.get(h.name.idx()))
            .is_some_and(|n| n == name)
    })
}
