//! `bls12381` natives with the vectors of the framework's own Move tests
//! (`bls12381.move`: `test_pubkey_validation`, `test_pubkey_aggregation`,
//! `test_signature_aggregation`, `test_verify_multisig`, `test_verify_aggsig`,
//! `test_verify_normal_and_verify_sigshare`, `test_verify_pop`), called
//! directly and through the framework's Move functions on the tree and flat
//! interpreters and the JIT (results and gas identical).

mod common;

use common::framework::{bool_bcs, bytes_arg, Framework, Outcome};
use movejit_aptos_natives::{aptos_registry, FRAMEWORK};
use movejit_engine::runtime::natives::{NativeContext, TypeInfo};
use movejit_engine::runtime::{GasMeter, Layout, Memory, StatusCode, Type, Value, VmError, VmResult};

fn hex(s: &str) -> Vec<u8> {
    hex::decode(s).expect("hex")
}

const RANDOM_SIGNATURE: &str = "a01a65854f987d3434149b7f08f70730e30b241984e8712bc2aca885d632aafced4c3f661209debb6b1c8601326623cc16ca2f6c9edc53b7b88b7435fb6b05ddece418d2c34dc6aca2f5a11a79e67774582c14084a01dcb7820e4cb4bad0ea8d";
const RANDOM_PK: &str =
    "8a53e7ae5270e3e765cd8a4032c2e77c6f7e87a44ebb85bf28a4d7865565698f975346714262f9e47c6f3e0d5d951660";

/// `test_pubkey_validation`: two low-order points, one valid key.
const LOW_ORDER_PKS: [&str; 2] = [
    "ae3cd9403b69c20a0d455fd860e977fe6ee7140a7f091f26c860f2caccd3e0a7a7365798ac10df776675b3a67db8faa0",
    "928d4862a40439a67fd76a9c7560e2ff159e770dcf688ff7b2dd165792541c88ee76c82eb77dd6e9e72c89cbf1a56a68",
];
const VALID_PK: &str =
    "b3e4921277221e01ed71284be5e3045292b26c7f465a6fcdba53ee47edd39ec5160da3b229a73c75671024dcb36de091";

/// `test_pubkey_aggregation` / `test_verify_multisig`: keys and their prefix sums.
const PKS: [&str; 5] = [
    "92e201a806af246f805f460fbdc6fc90dd16a18d6accc236e85d3578671d6f6690dde22134d19596c58ce9d63252410a",
    "ab9df801c6f96ade1c0490c938c87d5bcc2e52ccb8768e1b5d14197c5e8bfa562783b96711b702dda411a1a9f08ebbfa",
    "b698c932cf7097d99c17bd6e9c9dc4eeba84278c621700a8f80ec726b1daa11e3ab55fc045b4dbadefbeef05c4182494",
    "934706a8b876d47a996d427e1526ce52c952d5ec0858d49cd262efb785b62b1972d06270b0a7adda1addc98433ad1843",
    "a4cd352daad3a0651c1998dfbaa7a748e08d248a54347544bfedd51a197e016bb6008e9b8e45a744e1a030cc3b27d2da",
];
const AGG_PKS: [&str; 5] = [
    "92e201a806af246f805f460fbdc6fc90dd16a18d6accc236e85d3578671d6f6690dde22134d19596c58ce9d63252410a",
    "b79ad47abb441d7eda9b220a626df2e4e4910738c5f777947f0213398ecafae044ec0c20d552d1348347e9abfcf3eca1",
    "b5f5eb6153ab5388a1a76343d714e4a2dcf224c5d0722d1e8e90c6bcead05c573fffe986460bd4000645a655bf52bc60",
    "b922006ec14c183572a8864c31dc6632dccffa9f9c86411796f8b1b5a93a2457762c8e2f5ef0a2303506c4bca9a4e0bf",
    "b53df1cfee2168f59e5792e710bf22928dc0553e6531dae5c7656c0a66fc12cb82fbb04863938c953dc901a5a79cc0f3",
];
/// `test_verify_multisig`: multisignatures on "Hello, Aptoverse!" under `AGG_PKS[i]`.
const MULTISIGS_UNDER_AGG_PKS: [&str; 5] = [
    "ade45c67bff09ae57e0575feb0be870f2d351ce078e8033d847615099366da1299c69497027b77badb226ff1708543cd062597030c3f1553e0aef6c17e7af5dd0de63c1e4f1f9da68c966ea6c1dcade2cdc646bd5e8bcd4773931021ec5be3fd",
    "964af3d83436f6a9a382f34590c0c14e4454dc1de536af205319ce1ed417b87a2374863d5df7b7d5ed900cf91dffa7a105d3f308831d698c0d74fb2259d4813434fb86425db0ded664ae8f85d02ec1d31734910317d4155cbf69017735900d4d",
    "b523a31813e771e55aa0fc99a48db716ecc1085f9899ccadb64e759ecb481a2fb1cdcc0b266f036695f941361de773081729311f6a1bca9d47393f5359c8c87dc34a91f5dae335590aacbff974076ad1f910dd81750553a72ccbcad3c8cc0f07",
    "a945f61699df58617d37530a85e67bd1181349678b89293951ed29d1fb7588b5c12ebb7917dfc9d674f3f4fde4d062740b85a5f4927f5a4f0091e46e1ac6e41bbd650a74dd49e91445339d741e3b10bdeb9bc8bba46833e0011ff91fa5c77bd2",
    "b627b2cfd8ae59dcf5e58cc6c230ae369985fd096e1bc3be38da5deafcbed7d939f07cccc75383539940c56c6b6453db193f563f5b6e4fe54915afd9e1baea40a297fa7eda74abbdcd4cc5c667d6db3b9bd265782f7693798894400f2beb4637",
];

/// `test_signature_aggregation`: signatures and their prefix sums.
const SIGS: [&str; 5] = [
    "a55ac2d64b4c1d141b15d876d3e54ad1eea07ee488e8287cce7cdf3eec551458ab5795ab196f8c112590346f7bc7c97e0053cd5be0f9bd74b93a87cd44458e98d125d6d5c6950ea5e62666beb34422ead79121f8cb0815dae41a986688d03eaf",
    "90a639a44491191c46379a843266c293de3a46197714ead2ad3886233dd5c2b608b6437fa32fbf9d218b20f1cbfa7970182663beb9c148e2e9412b148e16abf283ffa51b8a536c0e55d61b2e5c849edc49f636c0ef07cb99f125cbcf602e22bb",
    "9527d81aa15863ef3a3bf96bea6d58157d5063a93a6d0eb9d8b4f4bbda3b31142ec4586cb519da2cd7600941283d1bad061b5439703fd584295b44037a969876962ae1897dcc7cadf909d06faae213c4fef8e015dfb33ec109af02ab0c3f6833",
    "a54d264f5cab9654b1744232c4650c42b29adf2b19bd00bbdaf4a4d792ee4dfd40a1fe1b067f298bcfd8ae4fdc8250660a2848bd4a80d96585afccec5c6cfa617033dd7913c9acfdf98a72467e8a5155d4cad589a72d6665be7cb410aebc0068",
    "8d22876bdf73e6ad36ed98546018f6258cd47e45904b87c071e774a6ef4b07cac323258cb920b2fe2b07cca1f2b24bcb0a3194ec76f32edb92391ed2c39e1ada8919f8ea755c5e39873d33ff3a8f4fba21b1261c1ddb9d1688c2b40b77e355d1",
];
const MULTISIGS: [&str; 5] = [
    "a55ac2d64b4c1d141b15d876d3e54ad1eea07ee488e8287cce7cdf3eec551458ab5795ab196f8c112590346f7bc7c97e0053cd5be0f9bd74b93a87cd44458e98d125d6d5c6950ea5e62666beb34422ead79121f8cb0815dae41a986688d03eaf",
    "8f1949a06b95c3cb62898d861f889350c0d2cb740da513bfa195aa0ab8fa006ea2efe004a7bbbd9bb363637a279aed20132efd0846f520e7ee0e8ed847a1c6969bb986ad2239bcc9af561b6c2aa6d3016e1c722146471f1e28313de189fe7ebc",
    "ab5ad42bb8f350f8a6b4ae897946a05dbe8f2b22db4f6c37eff6ff737aebd6c5d75bd1abdfc99345ac8ec38b9a449700026f98647752e1c99f69bb132340f063b8a989728e0a3d82a753740bf63e5d8f51e413ebd9a36f6acbe1407a00c4b3e7",
    "ae307a0d055d3ba55ad6ec7094adef27ed821bdcf735fb509ab2c20b80952732394bc67ea1fd8c26ea963540df7448f8102509f7b8c694e4d75f30a43c455f251b6b3fd8b580b9228ffeeb9039834927aacefccd3069bef4b847180d036971cf",
    "8284e4e3983f29cb45020c3e2d89066df2eae533a01cb6ca2c4d466b5e02dd22467f59640aa120db2b9cc49e931415c3097e3d54ff977fd9067b5bc6cfa1c885d9d8821aef20c028999a1d97e783ae049d8fa3d0bbac36ce4ca8e10e551d3461",
];

/// `test_verify_aggsig`: "Hello, Aptos <i>!" signed by `AGG_SIG_PKS[i]`; prefix aggregates.
const AGG_SIG_PKS: [&str; 5] = [
    "b93d6aabb2b83e52f4b8bda43c24ea920bbced87a03ffc80f8f70c814a8b3f5d69fbb4e579ca76ee008d61365747dbc6",
    "b45648ceae3a983bcb816a96db599b5aef3b688c5753fa20ce36ac7a4f2c9ed792ab20af6604e85e42dab746398bb82c",
    "b3e4921277221e01ed71284be5e3045292b26c7f465a6fcdba53ee47edd39ec5160da3b229a73c75671024dcb36de091",
    "8463b8671c9775a7dbd98bf76d3deba90b5a90535fc87dc8c13506bb5c7bbd99be4d257e60c548140e1e30b107ff5822",
    "a79e3d0e9d04587a3b27d05efe5717da05fd93485dc47978c866dc70a01695c2efd247d1dd843a011a4b6b24079d7384",
];
const AGG_SIGS: [&str; 5] = [
    "a2bc8bdebe6215ba74b5b53c5ed2aa0c68221a4adf868989ccdcfb62bb0eecc6537def9ee686a7960169c5917d25e5220177ed1c5e95ecfd68c09694062e76efcb00759beac874e4f9a715fd144210883bf9bb272f156b0a1fa15d0e9460f01f",
    "a523aa3c3f1f1074d968ffecf017c7b93ae5243006bf0abd2e45c036ddbec99302984b650ebe5ba306cda4071d281ba50a99ef0e66c3957fab94163296f9d673fc58a36de4276f82bfb1d9180b591df93b5c2804d40dd68cf0f72cd92f86442e",
    "abed10f464de74769121fc09715e59a3ac96a5054a43a9d43cc890a2d4d332614c74c7fb4cceef6d25f85c65dee337330f062f89f23fec9ecf7ce3193fbba2c886630d753be6a4513a4634428904b767af2f230c5cadbcb53a451dd9c7d977f6",
    "8362871631ba822742a31209fa4abce6dc94b741ac4725995459da2951324b51efbbf6bc3ab4681e547ebfbadd80e0360dc078c04188198f0acea26c12645ace9107a4a23cf8db46abc7a402637f16a0477c72569fc9966fe804ef4dc0e5e758",
    "a44d967935fbe63a763ce2dd2b16981f967ecd31e20d3266eef5517530cdc233c8a18273b6d9fd7f61dd39178826e3f115df4e7b304f2de17373a95ea0c9a14293dcfd6f0ef416e06fa23f6a3c850d638e4d8f97ab4562ef55d49a96a50baa13",
];

/// `test_verify_normal_and_verify_sigshare`.
const NORMAL_SIG: &str = "b01ce4632e94d8c611736e96aa2ad8e0528a02f927a81a92db8047b002a8c71dc2d6bfb94729d0973790c10b6ece446817e4b7543afd7ca9a17c75de301ae835d66231c26a003f11ae26802b98d90869a9e73788c38739f7ac9d52659e1f7cf7";
const NORMAL_SIG_MAULED: &str = "a01ce4632e94d8c611736e96aa2ad8e0528a02f927a81a92db8047b002a8c71dc2d6bfb94729d0973790c10b6ece446817e4b7543afd7ca9a17c75de301ae835d66231c26a003f11ae26802b98d90869a9e73788c38739f7ac9d52659e1f7cf7";
const NORMAL_PK: &str =
    "94209a296b739577cb076d3bfb1ca8ee936f29b69b7dae436118c4dd1cc26fd43dcd16249476a006b8b949bf022a7858";
const OTHER_PKS: [&str; 2] = [
    "ae4851bb9e7782027437ed0e2c026dd63b77a972ddf4bd9f72bcc218e327986568317e3aa9f679c697a2cb7cebf992f3",
    "82ed7bb5528303a2e306775040a7309e0bd597b70d9949d8c6198a01a7be0b00079320ebfeaf7bbd5bfe86809940d252",
];

/// `test_verify_pop`: keys and their proofs of possession.
const POP_PKS: [&str; 5] = [
    "808864c91ae7a9998b3f5ee71f447840864e56d79838e4785ff5126c51480198df3d972e1e0348c6da80d396983e42d7",
    "8843843c76d167c02842a214c21277bad0bfd83da467cb5cf2d3ee67b2dcc7221b9fafa6d430400164012580e0c34d27",
    "a23b524d4308d46e43ee8cbbf57f3e1c20c47061ad9c3f915212334ea6532451dd5c01d3d3ada6bea10fe180b2c3b450",
    "a2aaa3eae1df3fc36365491afa1da5181acbb03801afd1430f04bb3b3eb18036f8b756b3508e4caee04beff50d455d1c",
    "84985b7e983dbdaddfca1f0b7dad9660bb39fff660e329acec15f69ac48c75dfa5d2df9f0dc320e4e7b7658166e0ac1c",
];
const POPS: [&str; 5] = [
    "ab42afff92510034bf1232a37a0d31bc8abfc17e7ead9170d2d100f6cf6c75ccdcfedbd31699a112b4464a06fd636f3f190595863677d660b4c5d922268ace421f9e86e3a054946ee34ce29e1f88c1a10f27587cf5ec528d65ba7c0dc4863364",
    "a6da5f2bc17df70ce664cff3e3a3e09d17162e47e652032b9fedc0c772fd5a533583242cba12095602e422e579c5284b1735009332dbdd23430bbcf61cc506ae37e41ff9a1fc78f0bc0d99b6bc7bf74c8f567dfb59079a035842bdc5fa3a0464",
    "b8eef236595e2eab34d3c1abdab65971f5cfa1988c731ef62bd63c9a9ad3dfc9259f4f183bfffbc8375a38ba62e1c41a11173209705996ce889859bcbb3ddd7faa3c4ea3d8778f30a9ff814fdcfea1fb163d745c54dfb4dcc5a8cee092ee0070",
    "a03a12fab68ad59d85c15dd1528560eff2c89250070ad0654ba260fda4334da179811d2ecdaca57693f80e9ce977d62011e3b1ee7bb4f7e0eb9b349468dd758f10fc35d54e0d0b8536ca713a77a301944392a5c192b6adf2a79ae2b38912dc98",
    "8899b294f3c066e6dfb59bc0843265a1ccd6afc8f0f38a074d45ded8799c39d25ee0376cd6d6153b0d4d2ff8655e578b140254f1287b9e9df4e2aecc5b049d8556a4ab07f574df68e46348fd78e5298b7913377cf5bb3cf4796bfc755902bfdd",
];

struct NoTypes;

impl TypeInfo for NoTypes {
    fn layout_of(&self, ty: &Type) -> VmResult<Layout> {
        Err(VmError::invariant(format!("no layout for {ty}")))
    }
}

fn native(function: &str, args: Vec<Value>) -> Vec<Value> {
    let registry = aptos_registry();
    let f = registry.get(&FRAMEWORK, "bls12381", function).unwrap_or_else(|| panic!("{function} registered"));
    let mut mem = Memory::default();
    let mut gas = GasMeter::unmetered();
    let mut cx = NativeContext { mem: &mut mem, gas: &mut gas, types: &NoTypes };
    f(&mut cx, &[], args).unwrap_or_else(|e| panic!("{function}: {e:?}"))
}

fn b(s: &str) -> Value {
    Value::from_bytes(&hex(s))
}

/// A `vector<PublicKeyWithPoP>` / `vector<Signature>` value.
fn wrapped(items: &[&str]) -> Value {
    Value::Vector(items.iter().map(|s| Value::Struct(vec![b(s)])).collect())
}

fn msg(s: &str) -> Value {
    Value::from_bytes(s.as_bytes())
}

fn aptos_msg(i: usize) -> String {
    format!("Hello, Aptos {}!", i + 1)
}

#[test]
fn natives_match_the_framework_tests() {
    let t = Value::Bool(true);
    let f = Value::Bool(false);
    // Validation and subgroup checks.
    let mut rows: Vec<(&str, Vec<Value>, Vec<Value>)> = vec![
        ("validate_pubkey_internal", vec![b(LOW_ORDER_PKS[0])], vec![f.clone()]),
        ("validate_pubkey_internal", vec![b(LOW_ORDER_PKS[1])], vec![f.clone()]),
        ("validate_pubkey_internal", vec![b(VALID_PK)], vec![t.clone()]),
        ("validate_pubkey_internal", vec![b(RANDOM_PK)], vec![t.clone()]),
        ("validate_pubkey_internal", vec![Value::from_bytes(&[0x80; 47])], vec![f.clone()]),
        ("signature_subgroup_check_internal", vec![b(RANDOM_SIGNATURE)], vec![t.clone()]),
        ("signature_subgroup_check_internal", vec![Value::from_bytes(&hex(RANDOM_SIGNATURE)[..95])], vec![f.clone()]),
        // Empty aggregations: (vector[], false).
        ("aggregate_pubkeys_internal", vec![wrapped(&[])], vec![Value::from_bytes(&[]), f.clone()]),
        ("aggregate_signatures_internal", vec![wrapped(&[])], vec![Value::from_bytes(&[]), f.clone()]),
        // A key that does not decode spoils the aggregate.
        ("aggregate_pubkeys_internal", vec![wrapped(&[PKS[0], "00"])], vec![Value::from_bytes(&[]), f.clone()]),
        // Normal signatures and shares.
        ("verify_normal_signature_internal", vec![b(NORMAL_SIG), b(NORMAL_PK), msg("Hello Aptos!")], vec![t.clone()]),
        ("verify_signature_share_internal", vec![b(NORMAL_SIG), b(NORMAL_PK), msg("Hello Aptos!")], vec![t.clone()]),
        (
            "verify_normal_signature_internal",
            vec![b(NORMAL_SIG_MAULED), b(NORMAL_PK), msg("Hello Aptos!")],
            vec![f.clone()],
        ),
        (
            "verify_signature_share_internal",
            vec![b(NORMAL_SIG_MAULED), b(NORMAL_PK), msg("Hello Aptos!")],
            vec![f.clone()],
        ),
        (
            "verify_normal_signature_internal",
            vec![b(NORMAL_SIG), b(OTHER_PKS[0]), msg("Hello Aptos!")],
            vec![f.clone()],
        ),
        ("verify_signature_share_internal", vec![b(NORMAL_SIG), b(OTHER_PKS[1]), msg("Bello Aptos!")], vec![f.clone()]),
        // Multi-signatures on "Hello, Aptoverse!".
        (
            "verify_multisignature_internal",
            vec![b(MULTISIGS_UNDER_AGG_PKS[4]), b(AGG_PKS[4]), msg("Hello, Aptoverse!")],
            vec![t.clone()],
        ),
        (
            "verify_multisignature_internal",
            vec![b(MULTISIGS_UNDER_AGG_PKS[4]), b(AGG_PKS[3]), msg("Hello, Aptoverse!")],
            vec![f.clone()],
        ),
        // Aggregate signatures: |pks| != |msgs| or no input is false.
        (
            "verify_aggregate_signature_internal",
            vec![b(RANDOM_SIGNATURE), wrapped(&[]), Value::Vector(vec![])],
            vec![f.clone()],
        ),
        (
            "verify_aggregate_signature_internal",
            vec![b(RANDOM_SIGNATURE), wrapped(&[RANDOM_PK]), Value::Vector(vec![])],
            vec![f.clone()],
        ),
        (
            "verify_aggregate_signature_internal",
            vec![b(RANDOM_SIGNATURE), wrapped(&[]), Value::Vector(vec![b("ab")])],
            vec![f.clone()],
        ),
        (
            "verify_aggregate_signature_internal",
            vec![b(RANDOM_SIGNATURE), wrapped(&[RANDOM_PK]), Value::Vector(vec![b("cd"), b("ef")])],
            vec![f.clone()],
        ),
        (
            "verify_aggregate_signature_internal",
            vec![
                b(RANDOM_SIGNATURE),
                wrapped(&[RANDOM_PK, RANDOM_PK, RANDOM_PK]),
                Value::Vector(vec![b("cd"), b("ef")]),
            ],
            vec![f.clone()],
        ),
        // Proofs of possession, and mauled key / proof (0xa0 | pk[1:], 0xbb | pop[1:]).
        (
            "verify_proof_of_possession_internal",
            vec![b(&format!("a0{}", &POP_PKS[0][2..])), b(POPS[0])],
            vec![f.clone()],
        ),
        (
            "verify_proof_of_possession_internal",
            vec![b(POP_PKS[0]), b(&format!("bb{}", &POPS[0][2..]))],
            vec![f.clone()],
        ),
        ("verify_proof_of_possession_internal", vec![b(POP_PKS[0]), b(POPS[1])], vec![f.clone()]),
    ];
    for i in 0..5 {
        rows.push(("aggregate_pubkeys_internal", vec![wrapped(&PKS[..=i])], vec![b(AGG_PKS[i]), t.clone()]));
        rows.push(("validate_pubkey_internal", vec![b(AGG_PKS[i])], vec![t.clone()]));
        rows.push(("aggregate_signatures_internal", vec![wrapped(&SIGS[..=i])], vec![b(MULTISIGS[i]), t.clone()]));
        rows.push(("signature_subgroup_check_internal", vec![b(MULTISIGS[i])], vec![t.clone()]));
        rows.push((
            "verify_multisignature_internal",
            vec![b(MULTISIGS_UNDER_AGG_PKS[i]), b(AGG_PKS[i]), msg("Hello, Aptoverse!")],
            vec![t.clone()],
        ));
        let msgs = Value::Vector((0..=i).map(|j| msg(&aptos_msg(j))).collect());
        rows.push((
            "verify_aggregate_signature_internal",
            vec![b(AGG_SIGS[i]), wrapped(&AGG_SIG_PKS[..=i]), msgs],
            vec![t.clone()],
        ));
        rows.push(("verify_proof_of_possession_internal", vec![b(POP_PKS[i]), b(POPS[i])], vec![t.clone()]));
    }
    // The aggregate of the first i+1 signatures does not verify for i+2 messages.
    let msgs = Value::Vector((0..3).map(|j| msg(&aptos_msg(j))).collect());
    rows.push((
        "verify_aggregate_signature_internal",
        vec![b(AGG_SIGS[1]), wrapped(&AGG_SIG_PKS[..3]), msgs],
        vec![f.clone()],
    ));
    for (function, args, want) in rows {
        assert_eq!(native(function, args.clone()), want, "{function}({args:?})");
    }
}

/// Calls into the framework's `bls12381` (its verifiers take references).
const WRAPPER: &str = "
module 0xcafe::bls_calls
use 0x1::bls12381 as bls
use 0x1::option

public fun multisig(pks: vector<bls::PublicKeyWithPoP>, sig: vector<u8>, msg: vector<u8>): (vector<u8>, bool)
    local apk: bls::AggrPublicKeysWithPoP
    local s: bls::AggrOrMultiSignature
    move_loc pks
    call bls::aggregate_pubkeys
    st_loc apk
    move_loc sig
    call bls::aggr_or_multi_signature_from_bytes
    st_loc s
    borrow_loc apk
    call bls::aggregate_pubkey_to_bytes
    borrow_loc s
    borrow_loc apk
    move_loc msg
    call bls::verify_multisignature
    ret

public fun aggsig(sig: vector<u8>, pks: vector<bls::PublicKeyWithPoP>, msgs: vector<vector<u8>>): bool
    local s: bls::AggrOrMultiSignature
    move_loc sig
    call bls::aggr_or_multi_signature_from_bytes
    st_loc s
    borrow_loc s
    move_loc pks
    move_loc msgs
    call bls::verify_aggregate_signature
    ret

public fun normal(sig: vector<u8>, pk: vector<u8>, msg: vector<u8>): bool
    local s: bls::Signature
    local k: bls::PublicKey
    move_loc sig
    call bls::signature_from_bytes
    st_loc s
    move_loc pk
    call bls::public_key_from_bytes
    call option::destroy_some<bls::PublicKey>
    st_loc k
    borrow_loc s
    borrow_loc k
    move_loc msg
    call bls::verify_normal_signature
    ret

public fun with_pop(pk: vector<u8>, pop: vector<u8>): option::Option<bls::PublicKeyWithPoP>
    local p: bls::ProofOfPossession
    move_loc pop
    call bls::proof_of_possession_from_bytes
    st_loc p
    move_loc pk
    borrow_loc p
    call bls::public_key_from_bytes_with_pop
    ret
";

/// BCS of a `vector<vector<u8>>` (also `vector<S>` of one-field byte structs).
fn bytes_list(items: &[Vec<u8>]) -> Vec<u8> {
    let mut out = uleb(items.len());
    for i in items {
        out.extend(bytes_arg(i));
    }
    out
}

fn uleb(mut n: usize) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return out;
        }
        out.push(byte | 0x80);
    }
}

#[test]
fn framework_bls12381_functions_agree_on_every_executor() {
    let fw = Framework::with_wrapper(WRAPPER);
    let hx = |s: &str| hex(s);
    let list = |items: &[&str]| bytes_list(&items.iter().map(|s| hex(s)).collect::<Vec<_>>());
    let ok = |items: Vec<Vec<u8>>| -> Outcome { Ok(items) };
    let some = |s: &str| [vec![1u8], bytes_arg(&hex(s))].concat();
    let none = vec![0u8];
    let mut rows: Vec<(&str, Vec<Vec<u8>>, Outcome)> = vec![
        ("0x1::bls12381::public_key_from_bytes", vec![bytes_arg(&hx(LOW_ORDER_PKS[0]))], ok(vec![none.clone()])),
        ("0x1::bls12381::public_key_from_bytes", vec![bytes_arg(&hx(LOW_ORDER_PKS[1]))], ok(vec![none.clone()])),
        ("0x1::bls12381::public_key_from_bytes", vec![bytes_arg(&hx(VALID_PK))], ok(vec![some(VALID_PK)])),
        ("0x1::bls12381::aggregate_signatures", vec![list(&[])], ok(vec![none.clone()])),
        // `test_empty_pubkey_aggregation`: error::invalid_argument(EZERO_PUBKEYS).
        (
            "0xcafe::bls_calls::multisig",
            vec![list(&[]), bytes_arg(&hx(MULTISIGS[0])), bytes_arg(b"x")],
            Err((StatusCode::ABORTED, Some(65537))),
        ),
        (
            "0xcafe::bls_calls::normal",
            vec![bytes_arg(&hx(NORMAL_SIG)), bytes_arg(&hx(NORMAL_PK)), bytes_arg(b"Hello Aptos!")],
            ok(vec![bool_bcs(true)]),
        ),
        (
            "0xcafe::bls_calls::normal",
            vec![bytes_arg(&hx(NORMAL_SIG_MAULED)), bytes_arg(&hx(NORMAL_PK)), bytes_arg(b"Hello Aptos!")],
            ok(vec![bool_bcs(false)]),
        ),
        (
            "0xcafe::bls_calls::normal",
            vec![bytes_arg(&hx(NORMAL_SIG)), bytes_arg(&hx(OTHER_PKS[1])), bytes_arg(b"Bello Aptos!")],
            ok(vec![bool_bcs(false)]),
        ),
        (
            "0xcafe::bls_calls::with_pop",
            vec![bytes_arg(&hx(&format!("a0{}", &POP_PKS[0][2..]))), bytes_arg(&hx(POPS[0]))],
            ok(vec![none.clone()]),
        ),
    ];
    for i in 0..5 {
        rows.push(("0x1::bls12381::aggregate_signatures", vec![list(&SIGS[..=i])], ok(vec![some(MULTISIGS[i])])));
        rows.push((
            "0xcafe::bls_calls::multisig",
            vec![list(&PKS[..=i]), bytes_arg(&hx(MULTISIGS_UNDER_AGG_PKS[i])), bytes_arg(b"Hello, Aptoverse!")],
            ok(vec![bytes_arg(&hx(AGG_PKS[i])), bool_bcs(true)]),
        ));
        let msgs: Vec<Vec<u8>> = (0..=i).map(|j| aptos_msg(j).into_bytes()).collect();
        rows.push((
            "0xcafe::bls_calls::aggsig",
            vec![bytes_arg(&hx(AGG_SIGS[i])), list(&AGG_SIG_PKS[..=i]), bytes_list(&msgs)],
            ok(vec![bool_bcs(true)]),
        ));
        rows.push((
            "0xcafe::bls_calls::with_pop",
            vec![bytes_arg(&hx(POP_PKS[i])), bytes_arg(&hx(POPS[i]))],
            ok(vec![some(POP_PKS[i])]),
        ));
    }
    for (f, args, want) in rows {
        assert_eq!(fw.call_everywhere(f, &args), want, "{f}");
    }
}
