//! The Move bytecode verifier for both flavours.
