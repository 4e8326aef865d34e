//! scratch
#[test]
fn scratch() {
    use sift_compile::ebpf::{self, EbpfOptions, Hook};
    let resolver = crate::resolver();
    for e in ["tcp port 80", "host 1.2.3.4"] {
        let f = crate::compile(&resolver, e, None).unwrap();
        let l = ebpf::lower(&f.compiled, &EbpfOptions::new(Hook::Xdp)).unwrap();
        println!("{e}\n{}", l.listing());
    }
}
