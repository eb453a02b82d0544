//! Bytes → model, for modules of both flavours and Aptos scripts.
//!
//! The container is read first (magic, version word, table directory), then
//! the part after the tables (the self handle for modules, `main` for
//! scripts), then every table in offset order, common tables before
//! module-only ones, as the real deserializers do, so that the first error
//! found is the one they report. Decoding ends with the bounds check.

mod code;
mod entries;
mod header;
mod types;

pub use types::is_valid_identifier;

use crate::binary::table;
use crate::bounds::{self, Layout};
use crate::reader::Reader;
use crate::*;
use header::TableHeader;

/// Decodes a module of either flavour and checks every index against its
/// table (bounds check included).
pub fn decode_module(bytes: &[u8]) -> FormatResult<CompiledModule> {
    let (module, layout) = decode_module_unchecked(bytes)?;
    bounds::check_module_at(&module, &layout)?;
    Ok(module)
}

/// Decodes an Aptos (or unflavoured v5/v6) script and bounds-checks it.
/// Sui-flavoured binaries are never scripts: `MALFORMED`.
pub fn decode_script(bytes: &[u8]) -> FormatResult<CompiledScript> {
    let (script, layout) = decode_script_unchecked(bytes)?;
    bounds::check_script_at(&script, &layout)?;
    Ok(script)
}

/// Reads only the magic and version word: (bytecode version, flavour).
/// Same statuses as [`decode_module`] gives for a bad header.
pub fn version_and_flavour(bytes: &[u8]) -> FormatResult<(u32, Flavour)> {
    header::read_version(bytes)
}

/// The parsed container: directory, content area and the reader positioned
/// after the tables.
struct Container<'a> {
    version: u32,
    flavour: Flavour,
    tables: Vec<TableHeader>,
    content: &'a [u8],
    content_base: usize,
    tail: Reader<'a>,
}

fn container(bytes: &[u8]) -> FormatResult<Container<'_>> {
    let (version, flavour) = header::read_version(bytes)?;
    let mut r = Reader::new(&bytes[8..], 8, version, flavour, "table directory");
    let mut tables = header::read_directory(&mut r)?;
    let content_base = r.offset();
    let content_len = header::check_directory(&mut tables, bytes.len(), content_base)? as usize;
    let content_end = content_base.checked_add(content_len).filter(|&end| end <= bytes.len()).ok_or_else(|| {
        FormatError::new(StatusCode::MALFORMED, content_base, "table contents", "table contents run past the end")
    })?;
    let content = &bytes[content_base..content_end];
    let tail = Reader::new(&bytes[content_end..], content_end, version, flavour, "module tail");
    Ok(Container { version, flavour, tables, content, content_base, tail })
}

impl<'a> Container<'a> {
    fn reader(&self, t: &TableHeader, context: &'static str) -> Reader<'a> {
        // `check_directory` guaranteed offset + len <= content.len().
        let start = t.offset as usize;
        let end = start + t.len as usize;
        Reader::new(&self.content[start..end], self.content_base + start, self.version, self.flavour, context)
    }

    /// Reads every entry of table `t` with `f` until the table is consumed.
    fn load<T>(
        &self,
        t: &TableHeader,
        context: &'static str,
        mut f: impl FnMut(&mut Reader<'a>) -> FormatResult<T>,
    ) -> FormatResult<Vec<T>> {
        let mut r = self.reader(t, context);
        let mut out = Vec::new();
        while !r.at_end() {
            out.push(f(&mut r)?);
        }
        Ok(out)
    }

    /// Like `load`, also recording where each entry starts.
    fn load_with_offsets<T>(
        &self,
        t: &TableHeader,
        context: &'static str,
        f: impl Fn(&mut Reader<'a>) -> FormatResult<T>,
        offsets: &mut Vec<usize>,
    ) -> FormatResult<Vec<T>> {
        let mut r = self.reader(t, context);
        let mut out = Vec::new();
        while !r.at_end() {
            offsets.push(r.offset());
            out.push(f(&mut r)?);
        }
        Ok(out)
    }

    fn err(&self, t: &TableHeader, status: StatusCode, msg: String) -> FormatError {
        FormatError::new(status, self.content_base + t.offset as usize, "table directory", msg)
    }
}

/// Tables shared by modules and scripts.
#[derive(Default)]
struct Common {
    module_handles: Vec<ModuleHandle>,
    struct_handles: Vec<StructHandle>,
    function_handles: Vec<FunctionHandle>,
    function_instantiations: Vec<FunctionInstantiation>,
    signatures: Vec<Signature>,
    identifiers: Vec<Identifier>,
    address_identifiers: Vec<AccountAddress>,
    constant_pool: Vec<Constant>,
    metadata: Vec<Metadata>,
}

fn common_tables(c: &Container, layout: &mut Layout) -> FormatResult<Common> {
    let mut out = Common::default();
    for t in &c.tables {
        layout.table_offsets.push((t.kind, c.content_base + t.offset as usize));
        match t.kind {
            table::MODULE_HANDLES => out.module_handles = c.load(t, "module handle table", entries::module_handle)?,
            table::STRUCT_HANDLES => out.struct_handles = c.load(t, "struct handle table", entries::struct_handle)?,
            table::FUNCTION_HANDLES => {
                out.function_handles = c.load(t, "function handle table", entries::function_handle)?
            }
            table::FUNCTION_INST => {
                out.function_instantiations =
                    c.load(t, "function instantiation table", entries::function_instantiation)?
            }
            table::SIGNATURES => out.signatures = c.load(t, "signature table", entries::signature)?,
            table::CONSTANT_POOL => out.constant_pool = c.load(t, "constant pool", entries::constant)?,
            table::METADATA => {
                // Sui mainnet rejects metadata (`no_extraneous_module_bytes`).
                if c.flavour == Flavour::Sui {
                    return Err(c.err(
                        t,
                        StatusCode::MALFORMED,
                        "metadata tables are not allowed in Sui modules".into(),
                    ));
                }
                out.metadata = c.load(t, "metadata table", entries::metadata)?
            }
            table::IDENTIFIERS => out.identifiers = c.load(t, "identifier table", types::identifier)?,
            table::ADDRESS_IDENTIFIERS => out.address_identifiers = c.load(t, "address table", entries::address)?,
            table::KIND_11..=table::KIND_14 if c.version < 7 => {
                return Err(c.err(
                    t,
                    StatusCode::MALFORMED,
                    format!("table kind {:#04x} (enums) needs bytecode version 7, module is v{}", t.kind, c.version),
                ));
            }
            _ => {}
        }
    }
    Ok(out)
}

/// Decodes a module without the bounds check; also returns where its tables
/// and function definitions start, for error offsets.
pub(crate) fn decode_module_unchecked(bytes: &[u8]) -> FormatResult<(CompiledModule, Layout)> {
    let mut c = container(bytes)?;
    c.tail.context = "self module handle index";
    let self_handle_offset = c.tail.offset();
    let self_module_handle_idx =
        ModuleHandleIndex(c.tail.index(binary::limit::TABLE_INDEX, "self module handle index")?);
    let mut layout = Layout { self_handle_offset, ..Layout::default() };
    let common = common_tables(&c, &mut layout)?;
    let mut m = CompiledModule {
        version: c.version,
        flavour: c.flavour,
        self_module_handle_idx,
        module_handles: common.module_handles,
        struct_handles: common.struct_handles,
        function_handles: common.function_handles,
        function_instantiations: common.function_instantiations,
        signatures: common.signatures,
        identifiers: common.identifiers,
        address_identifiers: common.address_identifiers,
        constant_pool: common.constant_pool,
        metadata: common.metadata,
        ..Default::default()
    };
    let sui = c.flavour == Flavour::Sui;
    for t in &c.tables {
        match t.kind {
            table::STRUCT_DEFS => m.struct_defs = c.load(t, "struct definition table", entries::struct_def)?,
            table::STRUCT_DEF_INST => {
                m.struct_def_instantiations =
                    c.load(t, "struct instantiation table", entries::struct_def_instantiation)?
            }
            table::FUNCTION_DEFS => {
                m.function_defs = c.load_with_offsets(
                    t,
                    "function definition table",
                    entries::function_def,
                    &mut layout.function_def_offsets,
                )?
            }
            table::FIELD_HANDLES => m.field_handles = c.load(t, "field handle table", entries::field_handle)?,
            table::FIELD_INST => {
                m.field_instantiations = c.load(t, "field instantiation table", entries::field_instantiation)?
            }
            table::FRIEND_DECLS => m.friend_decls = c.load(t, "friend table", entries::module_handle)?,
            table::KIND_11 if sui => m.enum_defs = c.load(t, "enum definition table", entries::enum_def)?,
            table::KIND_12 if sui => {
                m.enum_def_instantiations = c.load(t, "enum instantiation table", entries::enum_def_instantiation)?
            }
            table::KIND_13 if sui => m.variant_handles = c.load(t, "variant handle table", entries::variant_handle)?,
            table::KIND_14 if sui => {
                m.variant_instantiation_handles =
                    c.load(t, "variant instantiation handle table", entries::variant_instantiation_handle)?
            }
            table::KIND_11 => {
                m.variant_field_handles = c.load(t, "variant field handle table", entries::variant_field_handle)?
            }
            table::KIND_12 => {
                m.variant_field_instantiations =
                    c.load(t, "variant field instantiation table", entries::variant_field_instantiation)?
            }
            table::KIND_13 => {
                m.struct_variant_handles = c.load(t, "struct variant handle table", entries::struct_variant_handle)?
            }
            table::KIND_14 => {
                m.struct_variant_instantiations =
                    c.load(t, "struct variant instantiation table", entries::struct_variant_instantiation)?
            }
            _ => {}
        }
    }
    check_trailing(&mut c.tail)?;
    Ok((m, layout))
}

/// Decodes a script without the bounds check.
pub(crate) fn decode_script_unchecked(bytes: &[u8]) -> FormatResult<(CompiledScript, Layout)> {
    let mut c = container(bytes)?;
    if c.flavour == Flavour::Sui {
        // Sui removed scripts; only v5/v6 (unflavoured) and Aptos words can be scripts.
        return Err(FormatError::new(StatusCode::MALFORMED, 4, "version word", "Sui has no scripts"));
    }
    c.tail.context = "script main";
    let type_parameters = types::ability_sets(&mut c.tail)?;
    let parameters = SignatureIndex(c.tail.index(binary::limit::TABLE_INDEX, "parameters signature index")?);
    let access_specifiers =
        if c.flavour == Flavour::Aptos && c.version >= 8 { entries::access_specifiers(&mut c.tail)? } else { None };
    let mut layout = Layout::default();
    layout.function_def_offsets.push(c.tail.offset());
    let code = code::code_unit(&mut c.tail)?;
    let common = common_tables(&c, &mut layout)?;
    if let Some(t) = c.tables.iter().find(|t| !is_script_table(t.kind)) {
        return Err(c.err(t, StatusCode::MALFORMED, format!("table kind {:#04x} is not allowed in a script", t.kind)));
    }
    check_trailing(&mut c.tail)?;
    let script = CompiledScript {
        version: c.version,
        flavour: c.flavour,
        module_handles: common.module_handles,
        struct_handles: common.struct_handles,
        function_handles: common.function_handles,
        function_instantiations: common.function_instantiations,
        signatures: common.signatures,
        identifiers: common.identifiers,
        address_identifiers: common.address_identifiers,
        constant_pool: common.constant_pool,
        metadata: common.metadata,
        code,
        type_parameters,
        parameters,
        access_specifiers,
    };
    Ok((script, layout))
}

fn is_script_table(kind: u8) -> bool {
    matches!(
        kind,
        table::MODULE_HANDLES
            | table::STRUCT_HANDLES
            | table::FUNCTION_HANDLES
            | table::FUNCTION_INST
            | table::SIGNATURES
            | table::IDENTIFIERS
            | table::ADDRESS_IDENTIFIERS
            | table::CONSTANT_POOL
            | table::METADATA
    )
}

/// Bytes after the last field: Sui reports `TRAILING_BYTES`; Aptos's
/// deserializer ignores them, we reject them as `MALFORMED` so that decode
/// and serialize stay inverse.
fn check_trailing(tail: &mut Reader) -> FormatResult<()> {
    if tail.at_end() {
        return Ok(());
    }
    tail.context = "end of binary";
    let status = if tail.flavour == Flavour::Sui { StatusCode::TRAILING_BYTES } else { StatusCode::MALFORMED };
    Err(tail.error(status, format!("{} trailing bytes after the module", tail.remaining())))
}
