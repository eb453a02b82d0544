//! The movejit Cranelift JIT.
