mod common;
#[test]
#[ignore]
fn one() {
    let p = std::env::var("MV").unwrap();
    let m = common::load(std::path::Path::new(&p));
    println!("version {} flavour {:?}", m.version, m.flavour);
    println!("{:?}", movejit_verifier::verify_module_alone(&m, &movejit_verifier::VerifierConfig::aptos()));
}
