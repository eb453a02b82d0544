//! Verifier limits and flavour switches.

use movejit_format::{StatusCode, StatusFlavour};

/// Verifier limits and rule switches; [`VerifierConfig::aptos`] and
/// [`VerifierConfig::sui`] give each chain's production defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifierConfig {
    /// Whose verifier to mirror where the two differ (status names for the
    /// same rule, Sui's borrow labels, Aptos-only passes).
    pub flavour: StatusFlavour,
    /// Sui `additional_borrow_checks`: a full borrow of the frame counts as a
    /// mutable borrow of every local (Aptos always checks mutable local borrows).
    pub additional_borrow_checks: bool,
    /// Aptos publishing: every declared friend must exist (LINKER_ERROR).
    /// Loading an already-published module does not need this.
    pub check_friends_exist: bool,
    pub max_loop_depth: Option<usize>,
    pub max_function_parameters: Option<usize>,
    pub max_function_return_values: Option<usize>,
    pub max_generic_instantiation_length: Option<usize>,
    pub max_basic_blocks: Option<usize>,
    pub max_basic_blocks_in_script: Option<usize>,
    pub max_value_stack_size: usize,
    pub max_type_nodes: Option<usize>,
    pub max_type_depth: Option<usize>,
    pub max_push_size: Option<usize>,
    pub max_struct_definitions: Option<usize>,
    pub max_struct_variants: Option<usize>,
    pub max_fields_in_struct: Option<usize>,
    pub max_function_definitions: Option<usize>,
    pub max_back_edges_per_function: Option<usize>,
    /// Sui: longest vector constant (TOO_MANY_VECTOR_ELEMENTS).
    pub max_constant_vector_len: Option<u64>,
    /// Sui: longest identifier (IDENTIFIER_TOO_LONG).
    pub max_identifier_len: Option<u64>,
    /// Sui: the identifier `<SELF>` is refused (INVALID_IDENTIFIER).
    pub disallow_self_identifier: bool,
    pub max_back_edges_per_module: Option<usize>,
    /// Abstract-interpretation budget per function and per module.
    pub max_per_fun_meter_units: Option<u128>,
    pub max_per_mod_meter_units: Option<u128>,
    /// The status a blown budget gives (Aptos: CONSTRAINT_NOT_SATISFIED,
    /// Sui: PROGRAM_TOO_COMPLEX).
    pub meter_status: StatusCode,
    /// Aptos: function-typed signatures are checked like parameters.
    pub check_function_type_signatures: bool,
    /// Sui: no global storage instructions, no metadata, Sui entry rules
    /// (what Sui's own `sui-verifier` adds for package publishing).
    pub sui_rules: bool,
    /// Sui v6+: entry functions may not return values (Move-level rule).
    pub entry_no_return_values: bool,
    /// The VM's native-function table, as `(address, module, function)`.
    /// When set, every native function a module defines must be in it
    /// (MISSING_DEPENDENCY), which both VMs' loaders check when publishing.
    /// `None` skips the check: the table belongs to the runtime.
    pub known_natives: Option<std::sync::Arc<NativeTable>>,
}

/// Native functions a VM provides: `(address, module, function)`.
pub type NativeTable = std::collections::BTreeSet<(movejit_format::AccountAddress, String, String)>;

impl Default for VerifierConfig {
    fn default() -> Self {
        Self::aptos()
    }
}

impl VerifierConfig {
    pub fn is_sui(&self) -> bool {
        self.flavour == StatusFlavour::Sui
    }

    /// Aptos production (`aptos_prod_verifier_config` with function values on).
    pub fn aptos() -> Self {
        VerifierConfig {
            flavour: StatusFlavour::Aptos,
            additional_borrow_checks: false,
            check_friends_exist: true,
            max_loop_depth: Some(5),
            max_function_parameters: Some(128),
            max_function_return_values: Some(128),
            max_generic_instantiation_length: Some(32),
            max_basic_blocks: Some(1024),
            max_basic_blocks_in_script: Some(1024),
            max_value_stack_size: 1024,
            max_type_nodes: Some(128),
            max_type_depth: Some(20),
            max_push_size: Some(10000),
            max_struct_definitions: Some(1100),
            max_struct_variants: Some(127),
            max_fields_in_struct: Some(64),
            max_function_definitions: Some(1000),
            max_back_edges_per_function: None,
            max_constant_vector_len: None,
            max_identifier_len: None,
            disallow_self_identifier: false,
            max_back_edges_per_module: None,
            max_per_fun_meter_units: Some(1000 * 80000),
            max_per_mod_meter_units: Some(1000 * 80000),
            meter_status: StatusCode::CONSTRAINT_NOT_SATISFIED,
            check_function_type_signatures: true,
            sui_rules: false,
            entry_no_return_values: false,
            known_natives: None,
        }
    }

    /// Sui's Move verifier defaults (`VerifierConfig::default()` as Sui's
    /// publish pipeline in the bytecode-verifier suite uses it). Sui's
    /// package-level rules are off; see [`VerifierConfig::sui_protocol`].
    pub fn sui() -> Self {
        VerifierConfig {
            flavour: StatusFlavour::Sui,
            additional_borrow_checks: true,
            check_friends_exist: false,
            max_loop_depth: None,
            max_function_parameters: None,
            max_function_return_values: None,
            max_generic_instantiation_length: None,
            max_basic_blocks: None,
            max_basic_blocks_in_script: None,
            max_value_stack_size: 1024,
            max_type_nodes: None,
            max_type_depth: None,
            max_push_size: None,
            max_struct_definitions: None,
            max_struct_variants: None,
            max_fields_in_struct: None,
            max_function_definitions: None,
            max_back_edges_per_function: None,
            max_constant_vector_len: Some(1024 * 1024),
            max_identifier_len: Some(128),
            disallow_self_identifier: false,
            max_back_edges_per_module: None,
            max_per_fun_meter_units: Some(1000 * 8000 * 10),
            max_per_mod_meter_units: Some(1000 * 8000 * 10),
            meter_status: StatusCode::PROGRAM_TOO_COMPLEX,
            check_function_type_signatures: true,
            sui_rules: false,
            entry_no_return_values: false,
            known_natives: None,
        }
    }

    /// Sui's protocol limits plus its package rules (objects, id leak,
    /// private generics, init/entry, one-time witness, no global storage,
    /// no metadata), as applied when publishing on chain (protocol config
    /// `verifier_config`, metered).
    pub fn sui_protocol() -> Self {
        VerifierConfig {
            max_loop_depth: Some(5),
            max_function_parameters: Some(128),
            max_generic_instantiation_length: Some(32),
            max_basic_blocks: Some(1024),
            max_type_nodes: Some(256),
            max_push_size: Some(10000),
            max_back_edges_per_function: Some(10000),
            max_back_edges_per_module: Some(10000),
            max_fields_in_struct: Some(32),
            max_struct_definitions: Some(200),
            max_struct_variants: Some(127),
            max_function_definitions: Some(1000),
            max_constant_vector_len: Some(256 * 1024),
            disallow_self_identifier: true,
            // Metered publishing: `max_verifier_meter_ticks_per_function` and
            // `max_meter_ticks_per_module`, 16M since protocol 10.
            max_per_fun_meter_units: Some(16_000_000),
            max_per_mod_meter_units: Some(16_000_000),
            sui_rules: true,
            additional_borrow_checks: true,
            ..Self::sui()
        }
    }

    /// The defaults for a module's flavour.
    pub fn for_flavour(flavour: movejit_format::Flavour) -> Self {
        if flavour.is_sui() {
            Self::sui()
        } else {
            Self::aptos()
        }
    }
}
