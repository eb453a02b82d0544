//! movejit-sui-host: what a Sui validator does around Move execution, over
//! one movejit [`Engine`], enough to run a stream of transactions on
//! objects:
//!
//! - one module storage, and objects by id (their BCS), which transactions
//!   take as inputs ([`Input::Object`]): a `&mut` input is written back
//!   from the call's final value, an input the call deletes leaves the store;
//! - a transaction context per transaction ([`Input::TxContext`] and the
//!   natives' [`TransactionContext`]: sender, a digest numbered by the
//!   transaction, so fresh ids differ);
//! - dynamic-field children carried from one transaction to the next in the
//!   natives' [`ObjectRuntime`], and rolled back with a failed transaction
//!   ([`run_transaction`]);
//! - an object a call returns kept by id when the caller asks
//!   ([`SuiHost::keep_object`]), as a programmable transaction would hand
//!   it to the sender.
//!
//! Not modelled: object versions and ownership checks, objects transferred
//! to other owners (dropped with the transaction's effects), gas and storage
//! fees, programmable transactions of more than one call.

#![forbid(unsafe_code)]

pub use movejit_engine::FunctionRef;
use movejit_engine::{AccountAddress, Engine, GasMeter, InMemoryStorage, StatusCode, Type, VmError};
use movejit_runtime::natives::{with_extensions, NativeExtensions};
use movejit_sui_natives::{run_transaction, ObjectRuntime, TransactionContext};
use std::collections::BTreeMap;

/// One argument of a transaction's call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// BCS bytes, as given.
    Pure(Vec<u8>),
    /// The object with this id (its stored BCS); a `&mut` parameter's final
    /// value is stored back.
    Object(AccountAddress),
    /// `&mut TxContext` for this transaction.
    TxContext,
}

/// A stream of Sui transactions over one engine, one module storage and
/// one object store.
pub struct SuiHost {
    engine: Engine,
    storage: InMemoryStorage,
    ext: NativeExtensions,
    objects: BTreeMap<AccountAddress, Vec<u8>>,
    /// Transactions run so far (numbers the next one's digest).
    transactions: u64,
    sender: AccountAddress,
}

impl SuiHost {
    /// A host over `storage` (the framework and packages); transactions are
    /// sent by `sender`.
    pub fn new(engine: Engine, storage: InMemoryStorage, sender: AccountAddress) -> SuiHost {
        SuiHost { engine, storage, ext: NativeExtensions::new(), objects: BTreeMap::new(), transactions: 0, sender }
    }

    /// The same chain state served by another engine.
    pub fn with_engine(self, engine: Engine) -> SuiHost {
        SuiHost { engine, ..self }
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }
    pub fn storage(&self) -> &InMemoryStorage {
        &self.storage
    }
    /// Objects by id: their BCS.
    pub fn objects(&self) -> &BTreeMap<AccountAddress, Vec<u8>> {
        &self.objects
    }

    /// Every dynamic-field child: (id, parent, type, debug form of the
    /// value), in id order; `None` while a call still has one parked.
    pub fn children(&mut self) -> Option<Vec<(AccountAddress, AccountAddress, String)>> {
        let entries = self.ext.get_or_default::<ObjectRuntime>().children().entries()?;
        Some(entries.into_iter().map(|(id, parent, ty, v)| (id, parent, format!("{ty}:{v:?}"))).collect())
    }

    /// Keeps `bcs`, an object's BCS as a call returned it (its `UID` first),
    /// as an object; returns its id.
    pub fn keep_object(&mut self, bcs: Vec<u8>) -> Result<AccountAddress, VmError> {
        let id: [u8; 32] = bcs
            .get(..32)
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| VmError::new(StatusCode::FAILED_TO_DESERIALIZE_ARGUMENT).with_message("not an object"))?;
        let id = AccountAddress(id);
        self.objects.insert(id, bcs);
        Ok(id)
    }

    /// One transaction: a session of its own calling `f` with `inputs`. On
    /// success the `&mut` object inputs are stored back and deleted objects
    /// leave the store; on failure nothing changes. Returns the call's BCS
    /// return values.
    pub fn execute(
        &mut self,
        f: &FunctionRef,
        ty_args: &[Type],
        inputs: &[Input],
        gas: &mut GasMeter,
    ) -> Result<Vec<Vec<u8>>, VmError> {
        self.transactions += 1;
        let mut digest = [0u8; 32];
        digest[..8].copy_from_slice(&self.transactions.to_le_bytes());
        let context = TransactionContext { sender: self.sender, digest, ..TransactionContext::default() };
        let args = self.arguments(inputs, &context)?;
        self.ext.insert(context);
        let (engine, storage) = (&self.engine, &self.storage);
        let r = run_transaction(&mut self.ext, || {
            engine.new_session(storage).execute_function(&f.module, &f.name, ty_args, &args, gas)
        });
        let effects = self.ext.get_or_default::<ObjectRuntime>().take_effects();
        let r = r?;
        for (i, bytes) in r.mutrefs {
            if let Some(Input::Object(id)) = inputs.get(i) {
                self.objects.insert(*id, bytes);
            }
        }
        for id in &effects.deleted_ids {
            self.objects.remove(id);
        }
        Ok(r.returns)
    }

    /// A read-only call outside any transaction: its BCS returns.
    pub fn view(&mut self, f: &FunctionRef, ty_args: &[Type], inputs: &[Input]) -> Result<Vec<Vec<u8>>, VmError> {
        let context = TransactionContext { sender: self.sender, ..TransactionContext::default() };
        let args = self.arguments(inputs, &context)?;
        let (engine, storage) = (&self.engine, &self.storage);
        with_extensions(&mut self.ext, || {
            let mut session = engine.new_session(storage);
            Ok(session.execute_function(&f.module, &f.name, ty_args, &args, &mut GasMeter::unmetered())?.returns)
        })
    }

    fn arguments(&self, inputs: &[Input], context: &TransactionContext) -> Result<Vec<Vec<u8>>, VmError> {
        inputs
            .iter()
            .map(|input| match input {
                Input::Pure(b) => Ok(b.clone()),
                Input::Object(id) => self.objects.get(id).cloned().ok_or_else(|| {
                    VmError::new(StatusCode::FAILED_TO_DESERIALIZE_ARGUMENT).with_message(format!("no object {id}"))
                }),
                Input::TxContext => Ok(tx_context_bcs(context)),
            })
            .collect()
    }
}

/// BCS of the Move `TxContext` the natives' context describes: sender,
/// digest (a `vector<u8>`), epoch, epoch timestamp, ids created.
pub fn tx_context_bcs(c: &TransactionContext) -> Vec<u8> {
    c.move_bcs()
}
