//! Lists the native functions declared by the given modules.
fn main() {
    for p in std::env::args().skip(1) {
        let b = std::fs::read(&p).unwrap_or_default();
        if let Ok(m) = movejit_format::decode_module(&b) {
            for (i, f) in m.function_defs.iter().enumerate() {
                if f.is_native() {
                    println!("{}::{}", m.name(), m.function_name(movejit_format::FunctionDefinitionIndex(i as u16)));
                }
            }
        }
    }
}
