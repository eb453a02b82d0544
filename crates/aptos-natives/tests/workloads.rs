//! The packages of `../shared/corpus/aptos-workloads` (the Move code behind
//! Aptos's executor benchmarks) run as Aptos's benchmark drives them: the
//! package published over the real framework (`../shared/corpus/aptos`),
//! each module's `init_module` run with the publisher's signer, then the
//! benchmark's entry-function transactions, each in its own session with
//! its own transaction context, change sets applied in between and table
//! contents kept by the host (one `NativeExtensions` across transactions).
//!
//! The corpus has no recorded results for these calls, so each row states
//! the status the real Aptos VM gives on the same storage (the framework
//! published as the `clob` reference runner does, plus the two pieces of
//! genesis state the workloads read: the on-chain clock and the sending
//! accounts); the comment on a row says why when it is not `EXECUTED`.

mod common;

use common::{engine, shared, EXECUTORS};
use movejit_aptos_host::{FunctionRef, Host};
use movejit_aptos_natives::{EventLog, Randomness};
use movejit_engine::runtime::{AccountAddress, GasMeter, InMemoryStorage, ModuleId, StatusCode, Type, VmError};
use movejit_engine::ExecutorKind;
use movejit_format::decode_module;
use std::path::Path;

const PUBLISHER: u64 = 0xabcd;
const CAFE: u64 = 0xcafe;
const USER: u64 = 0x5eed;

/// What a transaction must end with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    Executed,
    Aborted(u64),
    Status(StatusCode),
}

fn signer(a: u64) -> Vec<u8> {
    let mut b = vec![0u8];
    b.extend_from_slice(&AccountAddress::from_u64(a).0);
    b
}
fn u64_arg(v: u64) -> Vec<u8> {
    v.to_le_bytes().to_vec()
}
fn u16_arg(v: u16) -> Vec<u8> {
    v.to_le_bytes().to_vec()
}
fn bool_arg(v: bool) -> Vec<u8> {
    vec![v as u8]
}
fn address_arg(a: u64) -> Vec<u8> {
    AccountAddress::from_u64(a).0.to_vec()
}
/// A `vector<u8>` or `String` argument.
fn bytes_arg(b: &[u8]) -> Vec<u8> {
    let mut out = vec![];
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

/// A `vector<u64>` argument.
fn bytes_arg_u64(v: &[u64]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut n = v.len();
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            break;
        }
        out.push(byte | 0x80);
    }
    for x in v {
        out.extend_from_slice(&x.to_le_bytes());
    }
    out
}

/// A host running one package's transactions: the framework published as
/// genesis state, the package's `init_module`s run, then transactions over
/// one engine ([`Host`]).
struct Chain {
    kind: ExecutorKind,
    host: Host,
}

impl Chain {
    fn new(kind: ExecutorKind, packages: &[&str]) -> (Chain, Vec<Expect>) {
        let mut storage = InMemoryStorage::default();
        let publish = |dir: &Path, storage: &mut InMemoryStorage| -> Vec<movejit_format::CompiledModule> {
            let mut out = vec![];
            let mut files: Vec<_> = walk(dir);
            files.sort();
            for p in files {
                let bytes = std::fs::read(&p).expect("module");
                let m = decode_module(&bytes).unwrap_or_else(|e| panic!("{}: {e:?}", p.display()));
                storage.publish(ModuleId::new(*m.address(), m.name()), bytes);
                out.push(m);
            }
            out
        };
        publish(&shared().join("corpus/aptos"), &mut storage);
        let mut modules = vec![];
        for p in packages {
            modules.extend(publish(&shared().join("corpus/aptos-workloads").join(p), &mut storage));
        }
        let host = Host::new(engine(kind), storage, AccountAddress::from_u64(USER));
        let mut chain = Chain { kind, host };
        let clock = chain.run("0x1::timestamp::set_time_has_started", vec![signer(1)]);
        assert_eq!(clock, Expect::Executed, "genesis: timestamp");
        for a in [PUBLISHER, CAFE, USER, 0x71, 0x72, 0x73, 0x74, 0x75, 0x76] {
            let r = chain.run("0x1::account::create_account_if_does_not_exist", vec![address_arg(a)]);
            assert_eq!(r, Expect::Executed, "genesis: account {a:#x}");
        }
        let inits = chain.host.init_modules(&modules).map_or_else(|e| outcome(&e), |()| Expect::Executed);
        (chain, vec![inits])
    }

    fn run(&mut self, function: &str, args: Vec<Vec<u8>>) -> Expect {
        self.host.extensions_mut().remove::<Randomness>();
        self.txn(function, args)
    }

    fn run_unbiasable(&mut self, function: &str, args: Vec<Vec<u8>>) -> Expect {
        self.host.extensions_mut().insert(Randomness::unbiasable());
        self.txn(function, args)
    }

    fn txn(&mut self, function: &str, args: Vec<Vec<u8>>) -> Expect {
        let f = FunctionRef::parse(function).expect("ADDRESS::module::function");
        match self.host.execute(&f, &[], &args, &mut GasMeter::unmetered()) {
            Ok(_) => Expect::Executed,
            Err(e) => {
                eprintln!("{function}: {} {:?} at {:?}", e.status.name(), e.sub_status, e.location);
                outcome(&e)
            }
        }
    }

    /// A read-only call (not a transaction): its BCS returns.
    fn view(&mut self, function: &str, ty_args: &[&str], args: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        let f = FunctionRef::parse(function).expect("ADDRESS::module::function");
        let ty: Vec<Type> = ty_args.iter().map(|t| Type::parse_tag(t).expect("type tag")).collect();
        self.host.view(&f, &ty, &args).unwrap_or_else(|e| panic!("{function}: {e:?}"))
    }

    fn events(&self) -> Vec<(String, Vec<u8>)> {
        self.host
            .extensions()
            .get::<EventLog>()
            .map_or(vec![], |l| l.events.iter().map(|e| (e.ty.to_string(), e.data.clone())).collect())
    }
}

fn outcome(e: &VmError) -> Expect {
    if e.status == StatusCode::ABORTED {
        Expect::Aborted(e.sub_status.unwrap_or(u64::MAX))
    } else {
        Expect::Status(e.status)
    }
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = vec![];
    for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())).flatten() {
        let p = e.path();
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n != "scripts") {
                out.extend(walk(&p));
            }
        } else if p.extension().is_some_and(|x| x == "mv") {
            out.push(p);
        }
    }
    out
}

type Row = (&'static str, Vec<Vec<u8>>, Expect);

/// Runs `rows` in order after publishing `packages`, on each executor;
/// every init_module and every row must end as expected. Returns the chain
/// of each executor for further checks.
fn check(packages: &[&str], rows: Vec<Row>) -> Vec<Chain> {
    let mut chains = vec![];
    for (_, kind) in EXECUTORS {
        let (mut chain, inits) = Chain::new(kind, packages);
        for (i, s) in inits.iter().enumerate() {
            assert_eq!(*s, Expect::Executed, "{packages:?} ({kind:?}): init_module #{i}");
        }
        let mut failures = vec![];
        for (f, args, expect) in rows.iter().cloned() {
            let got = chain.run(f, args);
            if got != expect {
                failures.push(format!("{f}: got {got:?}, expected {expect:?}"));
            }
        }
        assert!(failures.is_empty(), "{packages:?} ({kind:?}):\n{}", failures.join("\n"));
        chains.push(chain);
    }
    chains
}

use Expect::*;

#[test]
fn simple() {
    let f = |n: &str| -> &'static str { Box::leak(format!("0xabcd::simple::{n}").into_boxed_str()) };
    check(
        &["simple"],
        vec![
            (f("nop"), vec![signer(USER)], Executed),
            (f("nop_2_signers"), vec![signer(USER), signer(CAFE)], Executed),
            // `Counter` is created by init_module at the publisher only:
            // anyone else aborts with error::invalid_argument(1).
            (f("step_signer"), vec![signer(USER)], Aborted(0x1_0001)),
            (f("get_counter"), vec![signer(USER)], Aborted(0x1_0001)),
            (f("step_signer"), vec![signer(PUBLISHER)], Executed),
            (f("get_counter"), vec![signer(PUBLISHER)], Executed),
            (f("loop_nop"), vec![signer(USER), u64_arg(1000)], Executed),
            (f("loop_arithmetic"), vec![signer(USER), u64_arg(1000)], Executed),
            (f("loop_bcs"), vec![signer(USER), u64_arg(100), u64_arg(32)], Executed),
            (f("fibonacci_iterative"), vec![signer(USER), u64_arg(30)], Executed),
            (f("fibonacci_recursive"), vec![signer(USER), u64_arg(15)], Executed),
            (f("fibonacci_tail_recursive"), vec![signer(USER), u64_arg(30)], Executed),
            (f("get_from_random_const"), vec![signer(USER), u64_arg(0)], Executed),
            (f("make_or_change"), vec![signer(USER), u64_arg(7), bytes_arg(b"name"), bytes_arg(&[1; 100])], Executed),
            (f("make_or_change"), vec![signer(USER), u64_arg(8), bytes_arg(b"other"), bytes_arg(&[2; 10])], Executed),
            (f("bytes_make_or_change"), vec![signer(USER), bytes_arg(&[3; 50])], Executed),
            (f("set_id"), vec![signer(USER), u64_arg(9)], Executed),
            (f("set_name"), vec![signer(USER), bytes_arg(b"n")], Executed),
            (f("double"), vec![signer(USER)], Executed),
            (f("half"), vec![signer(USER)], Executed),
            (f("maximize"), vec![signer(CAFE), address_arg(USER)], Executed),
            (f("minimize"), vec![signer(CAFE), address_arg(USER)], Executed),
            (f("reset_data"), vec![signer(USER)], Executed),
        ],
    );
}

#[test]
fn objects() {
    check(
        &["framework_usecases"],
        vec![
            ("0xabcd::objects::create_objects", vec![signer(USER), u64_arg(10), u64_arg(10)], Executed),
            ("0xabcd::objects::create_objects", vec![signer(USER), u64_arg(1), u64_arg(100)], Executed),
            (
                "0xabcd::objects::create_objects_conflict",
                vec![signer(USER), u64_arg(5), u64_arg(10), address_arg(PUBLISHER)],
                Executed,
            ),
        ],
    );
}

#[test]
fn aggregators() {
    let chains = check(
        &["framework_usecases", "aggregator_examples"],
        vec![
            ("0xabcd::aggregator_example::increment", vec![], Executed),
            ("0xabcd::aggregator_example::increment_agg_v2", vec![], Executed),
            ("0xabcd::aggregator_example::modify_bounded_agg_v2", vec![bool_arg(true), u64_arg(10)], Executed),
            ("0xabcd::aggregator_example::modify_bounded_agg_v2", vec![bool_arg(false), u64_arg(5)], Executed),
            ("0xcafe::counter_with_milestone::create", vec![signer(CAFE), u64_arg(2)], Executed),
            ("0xcafe::counter_with_milestone::increment_milestone", vec![], Executed),
            ("0xcafe::counter_with_milestone::increment_milestone", vec![], Executed),
            ("0xcafe::counter_with_milestone::increment_milestone", vec![], Executed),
            ("0xcafe::counter_with_milestone::increment_milestone", vec![], Executed),
        ],
    );
    // Milestones every 2 increments: events at counts 2 and 4.
    let milestone = "0xcafe::counter_with_milestone::MilestoneReached".to_string();
    for chain in chains {
        let milestones: Vec<_> = chain.events().into_iter().filter(|(t, _)| *t == milestone).collect();
        assert_eq!(
            milestones,
            vec![(milestone.clone(), u64_arg(2)), (milestone.clone(), u64_arg(4))],
            "{:?}",
            chain.kind
        );
    }
}

#[test]
fn maps_and_vectors() {
    let m = |n: &str| -> &'static str { Box::leak(format!("0xabcd::maps_example::{n}").into_boxed_str()) };
    let v = |n: &str| -> &'static str { Box::leak(format!("0xabcd::vector_example::{n}").into_boxed_str()) };
    check(
        &["framework_usecases"],
        vec![
            (m("test_add_remove_simple_map"), vec![signer(USER), u64_arg(100), u64_arg(10)], Executed),
            (m("test_add_remove_ordered_map"), vec![signer(USER), u64_arg(100), u64_arg(10)], Executed),
            (
                m("test_add_remove_big_ordered_map"),
                vec![signer(USER), u64_arg(100), u64_arg(10), u16_arg(16), u16_arg(16)],
                Executed,
            ),
            // The map ends in a resource at the signer: a second run by the
            // same signer fails its `move_to`.
            (
                m("test_add_remove_big_ordered_map"),
                vec![signer(USER), u64_arg(100), u64_arg(10), u16_arg(16), u16_arg(16)],
                Status(StatusCode::RESOURCE_ALREADY_EXISTS),
            ),
            (
                m("test_add_remove_big_ordered_map"),
                vec![signer(CAFE), u64_arg(1000), u64_arg(10), u16_arg(4), u16_arg(4)],
                Executed,
            ),
            (v("test_trim_append"), vec![u64_arg(100), u64_arg(10), u64_arg(50), u64_arg(10)], Executed),
            (v("test_remove_insert"), vec![u64_arg(100), u64_arg(10), u64_arg(50), u64_arg(10)], Executed),
            (
                v("test_middle_move_range"),
                vec![u64_arg(100), u64_arg(10), u64_arg(50), u64_arg(20), u64_arg(10)],
                Executed,
            ),
        ],
    );
}

#[test]
fn transaction_context_and_resource_groups() {
    let r = |n: &str| -> &'static str { Box::leak(format!("0xabcd::resource_groups_example::{n}").into_boxed_str()) };
    check(
        &["framework_usecases"],
        vec![
            ("0xabcd::transaction_context_example::test_monotonic_counter_single", vec![], Executed),
            ("0xabcd::transaction_context_example::test_monotonic_counter_multiple", vec![u64_arg(10)], Executed),
            (r("set"), vec![signer(USER), u64_arg(3), bytes_arg(b"x")], Executed),
            (r("read_or_init"), vec![signer(USER), u64_arg(3)], Executed),
            (r("set_and_read"), vec![signer(USER), u64_arg(1), u64_arg(2), bytes_arg(b"y")], Executed),
            (r("set_p"), vec![signer(USER), signer(PUBLISHER), u64_arg(4), bytes_arg(b"z")], Executed),
        ],
    );
}

#[test]
fn fungible_assets() {
    let f = |n: &str| -> &'static str { Box::leak(format!("0xabcd::fungible_asset_example::{n}").into_boxed_str()) };
    let chains = check(
        &["framework_usecases"],
        vec![
            (f("mint"), vec![signer(PUBLISHER), address_arg(USER), u64_arg(1000)], Executed),
            // transfer(sender, asset creator, receiver, amount)
            (f("transfer"), vec![signer(USER), address_arg(PUBLISHER), address_arg(CAFE), u64_arg(100)], Executed),
            (f("transfer"), vec![signer(CAFE), address_arg(PUBLISHER), address_arg(USER), u64_arg(30)], Executed),
            // More than the sender holds: fungible_asset's
            // error::invalid_argument(EINSUFFICIENT_BALANCE = 4).
            (
                f("transfer"),
                vec![signer(CAFE), address_arg(PUBLISHER), address_arg(USER), u64_arg(71)],
                Aborted(0x1_0004),
            ),
        ],
    );
    for mut chain in chains {
        let metadata = chain.view(f("get_metadata"), &[], vec![address_arg(PUBLISHER)]).remove(0);
        for (account, balance) in [(USER, 1000 - 100 + 30), (CAFE, 100 - 30), (PUBLISHER, 0)] {
            let r = chain.view(
                "0x1::primary_fungible_store::balance",
                &["0x1::fungible_asset::Metadata"],
                vec![address_arg(account), metadata.clone()],
            );
            assert_eq!(r, vec![u64_arg(balance)], "balance of {account:#x} ({:?})", chain.kind);
        }
    }
}

#[test]
fn pictures_and_streams() {
    check(
        &["complex", "bcs_stream", "locals"],
        vec![
            ("0xabcd::vector_picture::create", vec![signer(USER), u64_arg(100)], Executed),
            (
                "0xabcd::vector_picture::update",
                vec![address_arg(USER), u64_arg(0), u64_arg(5), vec![1], vec![2], vec![3]],
                Executed,
            ),
            ("0xabcd::vector_picture::check", vec![address_arg(USER), u64_arg(0), u64_arg(5)], Executed),
            ("0xabcd::smart_table_picture::create", vec![signer(USER)], Executed),
            (
                "0xabcd::smart_table_picture::update",
                vec![address_arg(USER), u64_arg(0), bytes_arg_u64(&[3, 17, 3, 999, 42]), bytes_arg(&[1, 2, 3, 4, 5])],
                Executed,
            ),
            (
                "0xabcd::smart_table_picture::update",
                vec![address_arg(USER), u64_arg(0), bytes_arg_u64(&(0..200).collect::<Vec<_>>()), bytes_arg(&[9; 200])],
                Executed,
            ),
            ("0xcafe::bcs_stream::deserialize_u256_entry", vec![bytes_arg(&[7; 64]), u64_arg(2)], Executed),
            ("0xabcd::locals::benchmark", vec![], Executed),
            ("0xabcd::locals::benchmark_generic", vec![], Executed),
        ],
    );
}

#[test]
fn dice_roll_needs_unbiasable_randomness() {
    for (_, kind) in EXECUTORS {
        let (mut chain, inits) = Chain::new(kind, &["framework_usecases"]);
        assert!(inits.iter().all(|s| *s == Executed), "{inits:?}");
        // A plain call: randomness::next_32_bytes asserts is_unbiasable (abort 1).
        assert_eq!(chain.run("0xabcd::dice_roll::roll", vec![signer(USER)]), Aborted(1));
        // Unbiasable but before genesis started randomness: no PerBlockRandomness.
        assert_eq!(
            chain.run_unbiasable("0xabcd::dice_roll::roll", vec![signer(USER)]),
            Status(StatusCode::MISSING_DATA)
        );
        // Genesis: randomness::initialize, then the VM's block prologue sets a seed.
        assert_eq!(chain.run("0x1::randomness::initialize", vec![signer(1)]), Executed);
        let mut seed = vec![1u8]; // Option::Some
        seed.extend(bytes_arg(&[7; 32]));
        assert_eq!(chain.run("0x1::randomness::on_new_block", vec![signer(0), u64_arg(1), u64_arg(1), seed]), Executed);
        for _ in 0..3 {
            assert_eq!(chain.run_unbiasable("0xabcd::dice_roll::roll", vec![signer(USER)]), Executed);
        }
    }
}

#[test]
fn coins_tokens_pools_and_order_books() {
    check(
        &["framework_usecases", "complex", "experimental_usecases", "ambassador_token"],
        vec![
            // Coins convert to fungible assets through a map genesis
            // creates: coin::coin_to_fungible_asset aborts
            // error::not_found(ECOIN_CONVERSION_MAP_NOT_FOUND = 27) before it.
            ("0xabcd::coin_example::mint_p", vec![signer(USER), signer(PUBLISHER), u64_arg(1000)], Aborted(0x6_001B)),
            ("0x1::coin::create_coin_conversion_map", vec![signer(1)], Executed),
            ("0xabcd::coin_example::mint_p", vec![signer(USER), signer(PUBLISHER), u64_arg(1000)], Executed),
            ("0xabcd::fungible_asset_example::mint_p", vec![signer(USER), signer(PUBLISHER), u64_arg(1000)], Executed),
            // Token v1 (0x3::token: tables, string_utils).
            ("0xabcd::token_v1::token_v1_initialize_collection", vec![signer(PUBLISHER)], Executed),
            // Each user mints once: minted tokens are kept in a table keyed
            // by the user (a second add aborts with the table's
            // ALREADY_EXISTS, 0x6407), token names derive from the user
            // (a second token data of one name: ETOKEN_DATA_ALREADY_EXISTS).
            (
                "0xabcd::token_v1::token_v1_mint_and_store_nft_parallel",
                vec![signer(USER), address_arg(PUBLISHER)],
                Executed,
            ),
            (
                "0xabcd::token_v1::token_v1_mint_and_store_nft_parallel",
                vec![signer(USER), address_arg(PUBLISHER)],
                Aborted(0x8_0009),
            ),
            (
                "0xabcd::token_v1::token_v1_mint_and_store_nft_sequential",
                vec![signer(USER), address_arg(PUBLISHER)],
                Aborted(0x6407),
            ),
            (
                "0xabcd::token_v1::token_v1_mint_and_store_nft_sequential",
                vec![signer(0x71), address_arg(PUBLISHER)],
                Executed,
            ),
            (
                "0xabcd::token_v1::token_v1_mint_and_store_nft_sequential",
                vec![signer(0x72), address_arg(PUBLISHER)],
                Executed,
            ),
            (
                "0xabcd::token_v1::token_v1_mint_and_transfer_nft_parallel",
                vec![signer(0x73), address_arg(PUBLISHER)],
                Executed,
            ),
            (
                "0xabcd::token_v1::token_v1_mint_and_transfer_nft_sequential",
                vec![signer(0x74), address_arg(PUBLISHER)],
                Executed,
            ),
            ("0xabcd::token_v1::token_v1_mint_and_store_ft", vec![signer(0x75), address_arg(PUBLISHER)], Executed),
            ("0xabcd::token_v1::token_v1_mint_and_transfer_ft", vec![signer(0x76), address_arg(PUBLISHER)], Executed),
            // Token v2 objects (0x4: derived-string snapshots, string_utils).
            (
                "0xcafe::ambassador::mint_ambassador_token_by_user",
                vec![signer(USER), signer(CAFE), bytes_arg(b"desc"), bytes_arg(b"uri")],
                Executed,
            ),
            (
                "0xcafe::ambassador::mint_numbered_ambassador_token_by_user",
                vec![signer(USER), signer(CAFE), bytes_arg(b"desc"), bytes_arg(b"superstar #"), bytes_arg(b"uri")],
                Executed,
            ),
            ("0xcafe::ambassador::burn_named_by_user", vec![signer(USER), signer(CAFE)], Executed),
            // A named token's object stays after a burn but its token
            // resource is gone (object::exists_at is false):
            // address_to_object aborts not_found(ERESOURCE_DOES_NOT_EXIST = 7).
            ("0xcafe::ambassador::burn_named_by_user", vec![signer(USER), signer(CAFE)], Aborted(0x6_0007)),
            // Liquidity pool over fungible assets, events.
            (
                "0xabcd::liquidity_pool_wrapper::initialize_liquid_pair",
                vec![signer(PUBLISHER), bool_arg(true)],
                Executed,
            ),
            (
                "0xabcd::liquidity_pool_wrapper::swap",
                vec![signer(USER), signer(PUBLISHER), u64_arg(1500), bool_arg(true)],
                Executed,
            ),
            (
                "0xabcd::liquidity_pool_wrapper::swap",
                vec![signer(USER), signer(PUBLISHER), u64_arg(1200), bool_arg(false)],
                Executed,
            ),
            // Experimental order book (big_ordered_map over tables).
            (
                "0xabcd::order_book_example::place_order",
                vec![u32_arg(0), address_arg(USER), u64_arg(1), u64_arg(1000), u64_arg(5), bool_arg(true)],
                Executed,
            ),
            (
                "0xabcd::order_book_example::place_order",
                vec![u32_arg(0), address_arg(CAFE), u64_arg(2), u64_arg(900), u64_arg(3), bool_arg(false)],
                Executed,
            ),
            // cancel_order cancels as the publisher: order 1 (partly filled,
            // still resting) belongs to USER: EORDER_CREATOR_MISMATCH (9);
            // an unknown order: EORDER_NOT_FOUND (4).
            ("0xabcd::order_book_example::cancel_order", vec![u32_arg(0), u64_arg(1)], Aborted(9)),
            ("0xabcd::order_book_example::cancel_order", vec![u32_arg(0), u64_arg(99)], Aborted(4)),
            (
                "0xabcd::order_book_example::place_order",
                vec![u32_arg(0), address_arg(PUBLISHER), u64_arg(3), u64_arg(500), u64_arg(4), bool_arg(true)],
                Executed,
            ),
            ("0xabcd::order_book_example::cancel_order", vec![u32_arg(0), u64_arg(3)], Executed),
            ("0xabcd::order_book_example::cancel_order", vec![u32_arg(0), u64_arg(3)], Aborted(4)),
            // The failed cancel of order 1 removed it from the book before
            // aborting; the abort undoes that, so it is still there.
            ("0xabcd::order_book_example::cancel_order", vec![u32_arg(0), u64_arg(1)], Aborted(9)),
            // APT lives at 0xa after aptos_coin genesis, which this storage
            // lacks: object::address_to_object aborts not_found(2).
            (
                "0xabcd::permissioned_transfer::transfer",
                vec![signer(USER), address_arg(CAFE), u64_arg(1)],
                Aborted(0x6_0002),
            ),
            // Without the on-chain feature set, permissioned signers are off:
            // error::permission_denied(EPERMISSION_SIGNER_DISABLED = 9).
            (
                "0xabcd::permissioned_transfer::transfer_permissioned",
                vec![signer(USER), address_arg(CAFE), u64_arg(1)],
                Aborted(0x5_0009),
            ),
        ],
    );
}

fn u32_arg(v: u32) -> Vec<u8> {
    v.to_le_bytes().to_vec()
}

/// BCS of a `0x1::code::PackageMetadata` with one module per name, no
/// dependencies, the given upgrade policy.
fn package_metadata(name: &str, policy: u8, modules: &[&str]) -> Vec<u8> {
    let mut m = bytes_arg(name.as_bytes());
    m.push(policy); // UpgradePolicy { policy }
    m.extend(u64_arg(0)); // upgrade_number
    m.extend(bytes_arg(b"")); // source_digest
    m.extend(bytes_arg(b"")); // manifest
    m.push(modules.len() as u8);
    for n in modules {
        m.extend(bytes_arg(n.as_bytes())); // name
        m.extend(bytes_arg(b"")); // source
        m.extend(bytes_arg(b"")); // source_map
        m.push(0); // extension: none
    }
    m.push(0); // deps
    m.push(0); // extension: none
    m
}

/// `vector<vector<u8>>` of module files.
fn code_arg(files: &[&str]) -> Vec<u8> {
    let mut out = vec![files.len() as u8];
    for f in files {
        out.extend(bytes_arg(&std::fs::read(shared().join("corpus/aptos-workloads").join(f)).expect("module")));
    }
    out
}

#[test]
fn republish_through_code_natives() {
    let simple = code_arg(&["simple/simple.mv"]);
    check(
        &["simple"],
        vec![
            // Aptos's Republish workload: publish_p(user, publisher, metadata, code).
            (
                "0xabcd::simple::publish_p",
                vec![
                    signer(USER),
                    signer(PUBLISHER),
                    bytes_arg(&package_metadata("Simple", 1, &["simple"])),
                    simple.clone(),
                ],
                Executed,
            ),
            // Again: a compatible upgrade of the same code.
            (
                "0xabcd::simple::publish_p",
                vec![
                    signer(USER),
                    signer(PUBLISHER),
                    bytes_arg(&package_metadata("Simple", 1, &["simple"])),
                    simple.clone(),
                ],
                Executed,
            ),
            // The arbitrary policy (0) is refused by code::publish_package:
            // error::invalid_argument(EINCOMPATIBLE_POLICY_DISABLED = 8).
            (
                "0xabcd::simple::publish_p",
                vec![
                    signer(USER),
                    signer(PUBLISHER),
                    bytes_arg(&package_metadata("Simple", 0, &["simple"])),
                    simple.clone(),
                ],
                Aborted(0x1_0008),
            ),
            // Published at the owner's address only: to 0xcafe the bundle's
            // 0xabcd module fails the host's publish check.
            (
                "0xabcd::simple::publish_p",
                vec![signer(USER), signer(CAFE), bytes_arg(&package_metadata("Simple", 1, &["simple"])), simple],
                Status(StatusCode::MODULE_ADDRESS_DOES_NOT_MATCH_SENDER),
            ),
            ("0xabcd::simple::nop", vec![signer(USER)], Executed),
        ],
    );
}
