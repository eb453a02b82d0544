//! The JIT's module table holds the loader's modules by identity: the same
//! loaded module keeps its number, a new one with the same id (republished)
//! gets a new number and shadows the old one for names, and datatypes
//! resolve through the loaded module's datatype table.

use movejit_format::{decode_module, AccountAddress};
use movejit_jit::{JitConfig, JitEngine};
use movejit_loader::{DatatypeDef, LoadedModule};
use movejit_runtime::{NativeRegistry, Type};
use std::path::PathBuf;
use std::sync::Arc;

fn loaded(name: &str) -> Arc<LoadedModule> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/aptos/modules").join(name);
    let bytes = std::fs::read(dir.join(format!("{name}.mv"))).unwrap();
    Arc::new(LoadedModule::new(decode_module(&bytes).unwrap(), &NativeRegistry::with_stdlib()).unwrap())
}

#[test]
fn modules_are_numbered_by_identity() {
    let mut e = JitEngine::new(JitConfig::default()).unwrap();
    let (first, republished) = (loaded("recursion"), loaded("recursion"));
    let cafe = AccountAddress::from_u64(0xcafe);
    // (module added, its number, the number its name resolves to)
    let steps = [(&first, 0, 0), (&first, 0, 0), (&republished, 1, 1), (&republished, 1, 1)];
    for (m, number, by_name) in steps {
        assert_eq!(e.add_loaded((*m).clone()).unwrap(), number);
        assert_eq!(e.module_index(&cafe, "recursion"), Some(by_name));
    }
    // Both versions keep running under their own numbers.
    for module in [0, 1] {
        let key = e.instance_key(module, "depth", &[]).unwrap();
        let out = e.execute(&key, &[10u64.to_le_bytes().to_vec()], None).unwrap();
        assert_eq!(out.status, movejit_format::StatusCode::EXECUTED, "module #{module}");
    }
}

#[test]
fn datatypes_resolve_through_the_loaded_module() {
    let m = loaded("storage");
    let mut e = JitEngine::new(JitConfig::default()).unwrap();
    let mut checked = 0;
    for (name, def) in &m.datatypes {
        let DatatypeDef::Struct(i) = *def else { continue };
        let d = &m.struct_defs[i as usize];
        if !m.struct_handles[d.struct_handle.idx()].type_parameters.is_empty() {
            continue;
        }
        let ty = Type::Datatype(m.datatype_id(d.struct_handle).unwrap(), Vec::new());
        // Unknown before the module is added, known after.
        assert!(e.layout_of(&ty).is_err(), "{name}");
        checked += 1;
    }
    assert!(checked > 0, "storage declares non-generic structs");
    e.add_loaded(m.clone()).unwrap();
    for (name, def) in &m.datatypes {
        let DatatypeDef::Struct(i) = *def else { continue };
        let d = &m.struct_defs[i as usize];
        if m.struct_handles[d.struct_handle.idx()].type_parameters.is_empty() {
            let ty = Type::Datatype(m.datatype_id(d.struct_handle).unwrap(), Vec::new());
            assert!(e.layout_of(&ty).is_ok(), "{name}");
            assert!(e.value_layout_of(&ty).is_ok(), "{name}");
        }
    }
}
