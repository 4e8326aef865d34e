//! Criterion benchmarks of the pf evaluator (written below).
fn main() {}
