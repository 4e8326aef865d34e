//! Compiles a pcap-filter expression to CSPF and prints the program:
//! `cargo run -p sift-cspf --example cspfc -- [--indirect] [--dlt N] EXPR`.

fn main() {
    let mut indirect = false;
    let mut dlt = 1;
    let mut expr = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--indirect" | "--cspf-indirect" => indirect = true,
            "--dlt" => dlt = args.next().and_then(|v| v.parse().ok()).unwrap_or(1),
            _ => expr.push(a),
        }
    }
    let src = expr.join(" ");
    let resolver = sift_filter::SystemResolver::new();
    let opts = sift_cspf::Options::new(&resolver).with_indirect(indirect);
    let Some(link) = sift_wire::LinkType::from_dlt(dlt) else {
        eprintln!("error: DLT {dlt} is no link type's");
        std::process::exit(1);
    };
    match sift_cspf::compile_text(&src, link, &opts) {
        Ok(p) => {
            print!("{}", p.to_text());
            eprintln!("; {} words", p.words().len());
        }
        Err(e) => {
            eprint!("{}", e.render(&src));
            std::process::exit(1);
        }
    }
}
